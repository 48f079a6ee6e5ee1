/**
 * deploy/controller: the controller's namespace, ServiceAccount and permissions. It reads every pool and
 * writes only their status (the Ready=Unknown mark), records events, and holds one leader-election Lease.
 * Lease reads in the pool-lease namespaces are granted there (lease-namespaces.ts), not cluster-wide.
 */
import {POOL_KIND_NAMES, POOL_KINDS} from '../core/index.ts'
import {clusterRole, clusterRoleBinding, namespace, role, roleBinding, serviceAccount, serviceAccountSubject, type Manifest, type PolicyRule} from './manifest.ts'
import {CONTROLLER_NAME, CONTROLLER_NAMESPACE, LEADER_ELECTION_ID, LEADER_ELECTION_ROLE} from './names.ts'

export function controllerNamespace(): Manifest[] {
  return [namespace(CONTROLLER_NAMESPACE), serviceAccount(CONTROLLER_NAME, CONTROLLER_NAMESPACE)]
}

function poolRules(): PolicyRule[] {
  return POOL_KIND_NAMES.flatMap((name) => {
    const kind = POOL_KINDS[name]
    return [
      {apiGroups: [kind.group], resources: [kind.plural], verbs: ['get', 'list', 'watch']},
      {apiGroups: [kind.group], resources: [`${kind.plural}/status`], verbs: ['get', 'patch', 'update']},
    ]
  })
}

/** Both event APIs: client libraries record through either, and a 403 would only show in logs. */
const EVENT_RULES: PolicyRule[] = [
  {apiGroups: [''], resources: ['events'], verbs: ['create', 'patch']},
  {apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch']},
]

export function controllerClusterRbac(): Manifest[] {
  return [
    clusterRole(CONTROLLER_NAME, [...poolRules(), ...EVENT_RULES]),
    clusterRoleBinding(CONTROLLER_NAME, [serviceAccountSubject(CONTROLLER_NAME, CONTROLLER_NAMESPACE)]),
  ]
}

const LEADER_LEASE_RULES: PolicyRule[] = [
  {apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [LEADER_ELECTION_ID], verbs: ['get', 'update']},
  // RBAC cannot restrict `create` by name (the object has no name until the request is admitted), so
  // create is granted on any Lease in this namespace; nothing else of the controller's lives here.
  {apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create']},
]

export function leaderElectionRbac(): Manifest[] {
  return [
    role(LEADER_ELECTION_ROLE, CONTROLLER_NAMESPACE, LEADER_LEASE_RULES),
    roleBinding(LEADER_ELECTION_ROLE, CONTROLLER_NAMESPACE, [serviceAccountSubject(CONTROLLER_NAME, CONTROLLER_NAMESPACE)]),
  ]
}
