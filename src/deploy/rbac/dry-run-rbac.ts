/**
 * deploy/dry-run (opt-in, not in default): what `ironpool controller --dry-run` needs and no more, so
 * it can run beside IronCore's lifecycle controller or a live ironpool controller before ironpool is
 * given the pen. Its own ServiceAccount reads pools (never their status subresource: it writes none),
 * reads Leases in the pool-lease namespaces, records Events (its WouldMarkUnknown), and holds its own
 * leader-election Lease, `ironpool-controller-dry-run`, and its write probe's, never the controller's.
 */
import {CONTROLLER_DEFAULTS, POOL_KIND_NAMES, POOL_KINDS, type PoolKind} from '../../core/index.ts'
import {clusterRole, clusterRoleBinding, namespace, role, roleBinding, serviceAccount, serviceAccountSubject, type Manifest, type PolicyRule} from '../manifest.ts'
import {CONTROLLER_NAMESPACE} from '../names.ts'

export const DRY_RUN_NAME = 'ironpool-dry-run'
export const DRY_RUN_LEADER_ELECTION_ID = CONTROLLER_DEFAULTS.dryRunLeaderElectionId

const subject = () => [serviceAccountSubject(DRY_RUN_NAME, CONTROLLER_NAMESPACE)]

/** Read-only on every pool kind, plus Events: both event APIs, as the controller's role has them. */
function clusterRules(): PolicyRule[] {
  return [
    ...POOL_KIND_NAMES.map((name) => ({apiGroups: [POOL_KINDS[name].group], resources: [POOL_KINDS[name].plural], verbs: ['get', 'list', 'watch']})),
    {apiGroups: [''], resources: ['events'], verbs: ['create', 'patch']},
    {apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch']},
  ]
}

function leaseReader(kind: PoolKind): Manifest[] {
  const name = `${DRY_RUN_NAME}:lease-reader`
  return [
    role(name, kind.leaseNamespace, [{apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch']}]),
    roleBinding(name, kind.leaseNamespace, subject()),
  ]
}

function leaderElection(): Manifest[] {
  const name = `${DRY_RUN_NAME}:leader-election`
  return [
    role(name, CONTROLLER_NAMESPACE, [
      // Its leader election's Lease and its sight's write probe's (write-probe.ts), both its own.
      {apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [DRY_RUN_LEADER_ELECTION_ID, CONTROLLER_DEFAULTS.dryRunWriteProbeLease], verbs: ['get', 'update']},
      // As for the controller: RBAC cannot restrict create by name.
      {apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create']},
    ]),
    roleBinding(name, CONTROLLER_NAMESPACE, subject()),
  ]
}

/** The layer's objects; the Namespace is the controller's (the same object when both layers are applied). */
export function dryRunRbac(): Manifest[] {
  return [
    namespace(CONTROLLER_NAMESPACE),
    serviceAccount(DRY_RUN_NAME, CONTROLLER_NAMESPACE),
    clusterRole(DRY_RUN_NAME, clusterRules()),
    clusterRoleBinding(DRY_RUN_NAME, subject()),
    ...leaderElection(),
    ...POOL_KIND_NAMES.flatMap((name) => leaseReader(POOL_KINDS[name])),
  ]
}
