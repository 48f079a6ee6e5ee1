/**
 * deploy/poollet: per kind, what the poollet group may do with pools: read them and write their status.
 * RBAC grants this on every pool of the kind (a poollet's own name is only known per identity); the
 * admission policy in deploy/policies confines status writes to the poollet's own pool.
 */
import type {PoolKind} from '../core/index.ts'
import {clusterRole, clusterRoleBinding, groupSubject, type Manifest} from './manifest.ts'
import {poolletClusterRoleName} from './names.ts'

export function poolletPoolRbac(kind: PoolKind): Manifest[] {
  const name = poolletClusterRoleName(kind)
  return [
    clusterRole(name, [
      {apiGroups: [kind.group], resources: [kind.plural], verbs: ['get', 'list', 'watch']},
      {apiGroups: [kind.group], resources: [`${kind.plural}/status`], verbs: ['get', 'patch', 'update']},
    ]),
    clusterRoleBinding(name, [groupSubject(kind.poolletGroup)]),
  ]
}
