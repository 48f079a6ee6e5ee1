/**
 * deploy/poollet: per kind, what the poollet group may do with pools: read them and write their status.
 * RBAC grants this on every pool of the kind (a poollet's own name is only known per identity); the
 * admission policy in deploy/policies confines status writes to the poollet's own pool. And it may
 * record Events of its pool's Ready changes, in the namespace where Events of cluster-scoped objects go.
 */
import {CSR_API_GROUP, type PoolKind} from '../core/index.ts'
import {clusterRole, clusterRoleBinding, groupSubject, role, roleBinding, type Manifest} from './manifest.ts'
import {poolletClusterRoleName, poolletCsrRoleName} from './names.ts'

/** Where Events of cluster-scoped pools go, as the kubelet's of Nodes do (src/kube/stores/event-recorder.ts). */
const CLUSTER_EVENT_NAMESPACE = 'default'

export function poolletPoolRbac(kind: PoolKind): Manifest[] {
  const name = poolletClusterRoleName(kind)
  return [
    clusterRole(name, [
      {apiGroups: [kind.group], resources: [kind.plural], verbs: ['get', 'list', 'watch']},
      {apiGroups: [kind.group], resources: [`${kind.plural}/status`], verbs: ['get', 'patch', 'update']},
    ]),
    clusterRoleBinding(name, [groupSubject(kind.poolletGroup)]),
    role(`${name}:events`, CLUSTER_EVENT_NAMESPACE, [{apiGroups: [''], resources: ['events'], verbs: ['create', 'patch']}]),
    roleBinding(`${name}:events`, CLUSTER_EVENT_NAMESPACE, [groupSubject(kind.poolletGroup)]),
  ]
}

/**
 * Client certificates by CSR, as IronCore grants them: the kind's bootstrap tokens (to get a first
 * certificate) and its poollets (to renew theirs with the current identity) may create CSRs, read them
 * (to wait for the certificate), and `create` the subresource `certificatesigningrequests/<kind>poolclient`
 * that the approver's SubjectAccessReview asks about. Reading CSRs shows other requests' subjects and
 * certificates, which are public; the private keys never leave the poollets.
 */
export function poolletCsrRbac(kind: PoolKind): Manifest[] {
  const name = poolletCsrRoleName(kind)
  return [
    clusterRole(name, [
      {apiGroups: [CSR_API_GROUP], resources: ['certificatesigningrequests'], verbs: ['create', 'get', 'list', 'watch']},
      {apiGroups: [CSR_API_GROUP], resources: [`certificatesigningrequests/${kind.csrSubresource}`], verbs: ['create']},
    ]),
    clusterRoleBinding(name, [groupSubject(kind.bootstrapperGroup), groupSubject(kind.poolletGroup)]),
  ]
}
