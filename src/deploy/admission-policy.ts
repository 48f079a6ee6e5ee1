/**
 * deploy/policies: the poollets' NodeRestriction. RBAC lets a kind's poollet group write every Lease in
 * the kind's lease namespace and every pool's status, and create or patch every Event in `default` (it
 * cannot name the caller's own object); this ValidatingAdmissionPolicy admits such a write only when the
 * object is the pool in the caller's username (`<group>:system:<kind>pool:<pool>`): its Lease, its
 * status, or an Event about it.
 *
 * Choices worth knowing:
 * - matchConditions select poollets, by username prefix *or* by poollet group, so for every other user
 *   the policy is not evaluated at all: it cannot break the API for them, even if a CEL expression erred.
 *   A member of a poollet group whose username lacks the prefix (a certificate with the right O and
 *   another CN, a group mapping) is selected and owns no pool, so it may write none: the Node authorizer
 *   likewise grants node rights only to users both in `system:nodes` and named `system:node:<name>`.
 * - The name compared is `request.name`, from the URL: on a status subresource `object` is the whole
 *   pool, but on other subresources it is another type (autoscaling Scale), and on DELETE it is null;
 *   `request.name` is the name in every case (absent for a generateName create, which is then refused).
 * - A kind's objects are confined to that kind's poollets, whatever the groups say: a certificate with a
 *   volume pool's CN and the machine group cannot write any machine pool.
 * - Events: of cluster-scoped objects (whose Events live in `default`: pools, and the controller's about
 *   CRDs and CSRs) a poollet may write only those about its own pool (involvedObject kind, API group and
 *   name), and a patch must leave an Event about its pool that was already about it. Events about
 *   namespaced objects are RBAC's alone, because IronCore's poollets, with the same usernames, record
 *   Events about their Machines, Volumes and Buckets in those objects' namespaces. Only core/v1 Events:
 *   RBAC grants poollets nothing in events.k8s.io.
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
  return `${isPoollet(kind)} && variables.name == ${ownPool(kind)}`
}

const isPoollet = (kind: PoolKind): string => `${USER}.startsWith(${quote(kind.poolletUserPrefix)})`
const ownPool = (kind: PoolKind): string => `${USER}.substring(${kind.poolletUserPrefix.length})`

/** CEL: the request writes a core/v1 Event. */
const TARGETS_EVENT = "request.resource.group == '' && request.resource.resource == 'events'"

/** CEL: the Event `event` (object or oldObject) is about the caller's own pool of this kind. */
function eventAboutOwnPool(kind: PoolKind, event: string): string {
  const ref = `${event}.involvedObject`
  return [
    `has(${ref}.kind) && ${ref}.kind == ${quote(kind.kind)}`,
    `has(${ref}.apiVersion) && ${ref}.apiVersion.startsWith(${quote(`${kind.group}/`)})`,
    `has(${ref}.name) && ${ref}.name == ${ownPool(kind)}`,
  ].join(' && ')
}

/**
 * CEL: the Event `event` is about a namespaced object (left to RBAC: IronCore's poollets record Events
 * about their Machines, Volumes and Buckets in those objects' namespaces), or about the caller's own pool.
 * Events about cluster-scoped objects (pools, CRDs, CSRs: the controller's and other pools' Events) live
 * in `default`, and a poollet may write only its own pool's there.
 */
function eventAllowed(kinds: readonly PoolKind[], event: string): string {
  const namespaced = `(has(${event}.involvedObject.namespace) && ${event}.involvedObject.namespace != '')`
  return [namespaced, ...kinds.map((kind) => `(${isPoollet(kind)} && ${eventAboutOwnPool(kind, event)})`)].join(' || ')
}

/** CEL: the Event is (and on a patch, was) one the caller may write. */
export function ownsEvent(kinds: readonly PoolKind[]): string {
  return `(${eventAllowed(kinds, 'object')}) && (request.operation != 'UPDATE' || (${eventAllowed(kinds, 'oldObject')}))`
}

/** CEL: the caller is selected by the policy — a poollet by username, or a member of a poollet group. */
function selectsCaller(kinds: readonly PoolKind[]): string {
  const prefixes = kinds.map(isPoollet).join(' || ')
  const groups = `[${kinds.map((kind) => quote(kind.poolletGroup)).join(', ')}]`
  return `${prefixes} || (has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ${groups}))`
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
  // What an Event is about, for messages: `MachinePool p2`. Evaluated only for Events (variables are lazy).
  {
    name: 'involved',
    expression: "(has(object.involvedObject.kind) ? object.involvedObject.kind : '<no kind>') + ' ' + (has(object.involvedObject.name) ? object.involvedObject.name : '<no name>')",
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

function eventValidation(kinds: readonly PoolKind[]): Manifest {
  return {
    expression: `!(${TARGETS_EVENT}) || (${ownsEvent(kinds)})`,
    messageExpression: `${USER} + ' may not ' + request.operation + ' ' + variables.target + ' about ' + variables.involved + ': of cluster-scoped objects, a poollet may record Events only about the pool named in its username'`,
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
          // Not DELETE: RBAC grants poollets no delete of Events, and a DELETE has no object to judge.
          {apiGroups: [''], apiVersions: ['*'], resources: ['events'], operations: ['CREATE', 'UPDATE'], scope: SCOPE},
        ],
      },
      matchConditions: [{name: 'poollet-identity', expression: selectsCaller(kinds)}],
      variables: VARIABLES,
      validations: [...kinds.map(validation), eventValidation(kinds)],
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
