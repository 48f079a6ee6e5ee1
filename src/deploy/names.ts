/**
 * Names that more than one layer of deploy/ refers to (the lease namespaces bind the controller's
 * ServiceAccount; the policy is named in its binding). Kind-specific names come from the kinds table.
 */
import type {PoolKind} from '../core/index.ts'

export const CONTROLLER_NAMESPACE = 'ironpool-system'
export const CONTROLLER_NAME = 'ironpool-controller'
/** Placeholder: no image is built on these machines; a release replaces it (see the README's Deploy section). */
export const IMAGE = 'ghcr.io/ironpool/ironpool:latest'
/** The leader-election Lease, in CONTROLLER_NAMESPACE. */
export const LEADER_ELECTION_ID = CONTROLLER_NAME
export const POOLLET_POLICY = 'ironpool-poollet-own-pool'

/** IronCore names the poollets' Role and RoleBinding after their group, e.g. compute.ironcore.dev:system:machinepools. */
export function poolletRoleName(kind: PoolKind): string {
  return kind.poolletGroup
}

/** After IronCore's `ironcore-controller-manager:lease-reader`. */
export const LEASE_READER_ROLE = `${CONTROLLER_NAME}:lease-reader`
export const LEADER_ELECTION_ROLE = `${CONTROLLER_NAME}:leader-election`

/** The directory of a kind's lease-namespace layer under deploy/namespaces/. */
export function leaseLayerDir(kind: PoolKind): string {
  return `namespaces/${kind.name}pool-lease`
}

/**
 * The poollets' ClusterRole is prefixed with `ironpool:`: IronCore ships a ClusterRole named exactly like
 * the group with far more rules, and applying ours under that name would overwrite it. The Role in the
 * lease namespace keeps IronCore's name because there the rules are the same object.
 */
export function poolletClusterRoleName(kind: PoolKind): string {
  return `ironpool:${kind.poolletGroup}`
}

/**
 * The ClusterRole (and binding) that lets a kind's bootstrappers request client certificates for any
 * pool of the kind. The name is the one that once bound the poollets too: applying this release's
 * manifests replaces that binding's subjects, so no cluster keeps the old grant.
 */
export function poolletCsrRoleName(kind: PoolKind): string {
  return `${poolletClusterRoleName(kind)}:csr`
}

/** The ClusterRole (and binding) that lets a kind's poollets renew their own client certificates. */
export function poolletSelfCsrRoleName(kind: PoolKind): string {
  return `${poolletClusterRoleName(kind)}:csr-self`
}

/** The controller's opt-in CSR approver (deploy/csr-approver). */
export const CSR_APPROVER_ROLE = `${CONTROLLER_NAME}:csr-approver`
