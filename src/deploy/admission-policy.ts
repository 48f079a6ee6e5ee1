/**
 * deploy/policies: the poollets' NodeRestriction. RBAC lets a kind's poollet group write every Lease in
 * the kind's lease namespace and every pool's status (it cannot name the caller's own object); this
 * ValidatingAdmissionPolicy admits such a write only when the object's name is the pool in the
 * caller's username (`<group>:system:<kind>pool:<pool>`).
 *
 * Three choices worth knowing:
 * - matchConditions select poollet usernames only, so for every other user the policy is not evaluated
 *   at all: it cannot break the API for them, even if a CEL expression erred.
 * - The name compared is `request.name`, from the URL: on a status subresource `object` is the whole
 *   pool, but on other subresources it is another type (autoscaling Scale), and on DELETE it is null;
 *   `request.name` is the name in every case (absent for a generateName create, which is then refused).
 * - A kind's objects are confined to that kind's poollets, whatever the groups say: a certificate with a
 *   volume pool's CN and the machine group cannot write any machine pool.
 */
import {POOL_KIND_NAMES, POOL_KINDS, type PoolKind} from '../core/index.ts'
import {metadata, type Manifest} from './manifest.ts'
import {POOLLET_POLICY} from './names.ts'

const USER = 'request.userInfo.username'
/** PATCH arrives as UPDATE; DELETE is covered too, should a wider RBAC (IronCore's) grant it. */
const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE']
/**
 * The API server's default, spelled out: resourceRules is an atomic list, so a rule the server fills in
 * differs from ours and every client-side `kubectl apply` would report the policy `configured`.
 */
const SCOPE = '*'

const quote = (text: string): string => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`

/** CEL: this request writes one of the kind's objects (a Lease in its lease namespace, or a pool). Leases always have a namespace. */
export function targetsKind(kind: PoolKind): string {
  const lease = `request.resource.group == 'coordination.k8s.io' && request.resource.resource == 'leases' && request.namespace == ${quote(kind.leaseNamespace)}`
  const pool = `request.resource.group == ${quote(kind.group)} && request.resource.resource == ${quote(kind.plural)}`
  return `(${lease}) || (${pool})`
}

/** CEL: the caller is this kind's poollet for the pool the request names. */
export function ownsObject(kind: PoolKind): string {
  const prefix = kind.poolletUserPrefix
  return `${USER}.startsWith(${quote(prefix)}) && variables.name == ${USER}.substring(${prefix.length})`
}

/**
 * CEL variables. Fields the API server leaves out of an AdmissionRequest are absent, not empty, and
 * reading an absent field is an error (the server then prints the failed expression instead of our
 * message): `namespace` on cluster-scoped pools, `subResource` on Leases, `name` on a generateName create.
 */
const VARIABLES = [
  {name: 'name', expression: "has(request.name) ? request.name : ''"},
  // What the request touches, for messages: `machinepools/status p2`, `leases ironcore-machinepool-lease/p2`.
  {
    name: 'target',
    expression: "request.resource.resource + (has(request.subResource) ? '/' + request.subResource : '') + ' ' + (has(request.namespace) ? request.namespace + '/' : '') + variables.name",
  },
]

function validation(kind: PoolKind): Manifest {
  return {
    expression: `!(${targetsKind(kind)}) || (${ownsObject(kind)})`,
    messageExpression: `${USER} + ' may not ' + request.operation + ' ' + variables.target + ': a ${kind.name} poollet may write only the Lease and status of the ${kind.name} pool named in its username (${kind.poolletUserPrefix}<pool>)'`,
    // Forbidden (403), like the RBAC refusals around it, rather than the default Invalid (422).
    reason: 'Forbidden',
  }
}

export function poolletPolicy(): Manifest {
  const kinds = POOL_KIND_NAMES.map((name) => POOL_KINDS[name])
  const groups = [...new Set(kinds.map((kind) => kind.group))]
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: metadata(POOLLET_POLICY),
    spec: {
      // An error while judging a poollet's write refuses it; matchConditions keep everyone else out of reach.
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {apiGroups: ['coordination.k8s.io'], apiVersions: ['*'], resources: ['leases'], operations: OPERATIONS, scope: SCOPE},
          ...groups.map((group) => ({
            apiGroups: [group],
            apiVersions: ['*'],
            resources: kinds.filter((kind) => kind.group === group).flatMap((kind) => [kind.plural, `${kind.plural}/status`]),
            operations: OPERATIONS,
            scope: SCOPE,
          })),
        ],
      },
      matchConditions: [{name: 'poollet-identity', expression: kinds.map((kind) => `${USER}.startsWith(${quote(kind.poolletUserPrefix)})`).join(' || ')}],
      variables: VARIABLES,
      validations: kinds.map(validation),
    },
  }
}

export function poolletPolicyBinding(): Manifest {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: metadata(POOLLET_POLICY),
    spec: {policyName: POOLLET_POLICY, validationActions: ['Deny']},
  }
}
