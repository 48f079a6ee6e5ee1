/**
 * deploy/namespaces/<kind>pool-lease: the namespace of a kind's Leases, the poollets' Role there (as
 * IronCore grants it) and the controller's read-only Role. One function for all kinds, driven by the table.
 */
import type {PoolKind} from '../core/index.ts'
import {groupSubject, namespace, role, roleBinding, serviceAccountSubject, type Manifest, type PolicyRule} from './manifest.ts'
import {CONTROLLER_NAME, CONTROLLER_NAMESPACE, LEASE_READER_ROLE, poolletRoleName} from './names.ts'

const LEASES = {apiGroups: ['coordination.k8s.io'], resources: ['leases']}

/**
 * IronCore's rules, on every Lease in the namespace: RBAC cannot confine `create` to a name, and a
 * poollet's own name is only known per identity. The admission policy in deploy/policies narrows writes
 * to the poollet's own Lease, as NodeRestriction does for kubelets.
 */
const POOLLET_LEASE_RULES: PolicyRule[] = [{...LEASES, verbs: ['create', 'get', 'list', 'watch', 'update', 'patch']}]
const LEASE_READER_RULES: PolicyRule[] = [{...LEASES, verbs: ['get', 'list', 'watch']}]

export function leaseNamespaceObject(kind: PoolKind): Manifest {
  return namespace(kind.leaseNamespace)
}

export function poolletLeaseRbac(kind: PoolKind): Manifest[] {
  const name = poolletRoleName(kind)
  return [role(name, kind.leaseNamespace, POOLLET_LEASE_RULES), roleBinding(name, kind.leaseNamespace, [groupSubject(kind.poolletGroup)])]
}

export function controllerLeaseReaderRbac(kind: PoolKind): Manifest[] {
  return [
    role(LEASE_READER_ROLE, kind.leaseNamespace, LEASE_READER_RULES),
    roleBinding(LEASE_READER_ROLE, kind.leaseNamespace, [serviceAccountSubject(CONTROLLER_NAME, CONTROLLER_NAMESPACE)]),
  ]
}
