/**
 * deploy/poollet: per kind, what the poollet group may do with pools: read them and write their status.
 * RBAC grants this on every pool of the kind (a poollet's own name is only known per identity); the
 * admission policy in deploy/policies confines status writes to the poollet's own pool. And it may
 * record Events of its pool's Ready changes, in the namespace where Events of cluster-scoped objects go.
 */
import {CSR_API_GROUP, type PoolKind} from '../../core/index.ts'
import {clusterRole, clusterRoleBinding, groupSubject, role, roleBinding, type Manifest} from '../manifest.ts'
import {poolletClusterRoleName, poolletCsrRoleName, poolletSelfCsrRoleName} from '../names.ts'

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
 * Client certificates by CSR, split by who asks, as Kubernetes splits nodeclient and selfnodeclient:
 * the kind's bootstrap tokens may create CSRs, read them (to wait for the certificate), and `create`
 * `certificatesigningrequests/<kind>poolclient`, which the approver's SubjectAccessReview asks about for
 * a requester that is not a poollet (any pool name of the kind); the kind's poollets get the same CSR
 * verbs and `certificatesigningrequests/self<kind>poolclient` only, which the approver asks about for a
 * poollet renewing its own name (and it approves a poollet nothing else). Reading CSRs shows other
 * requests' subjects and certificates, which are public; the private keys never leave the poollets.
 */
export function poolletCsrRbac(kind: PoolKind): Manifest[] {
  const csrs = {apiGroups: [CSR_API_GROUP], resources: ['certificatesigningrequests'], verbs: ['create', 'get', 'list', 'watch']}
  const subresource = (name: string) => ({apiGroups: [CSR_API_GROUP], resources: [`certificatesigningrequests/${name}`], verbs: ['create']})
  const bootstrap = poolletCsrRoleName(kind)
  const self = poolletSelfCsrRoleName(kind)
  return [
    clusterRole(bootstrap, [csrs, subresource(kind.csrSubresource)]),
    clusterRoleBinding(bootstrap, [groupSubject(kind.bootstrapperGroup)]),
    clusterRole(self, [csrs, subresource(kind.selfCsrSubresource)]),
    clusterRoleBinding(self, [groupSubject(kind.poolletGroup)]),
  ]
}
