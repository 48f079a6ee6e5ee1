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
import {POOL_KIND_NAMES, POOL_KINDS, type PoolKind} from '../../core/index.ts'
import {metadata, type Manifest} from '../manifest.ts'
import {POOLLET_POLICY} from '../names.ts'

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

/**
 * Size bounds on what a poollet writes (issue 29): one identity that wrote 24 Leases with a 1.45 MB
 * holderIdentity made every list of its kind's Leases larger than the controller reads (32 MiB), and a
 * poollet may pad its pool's status the same way. Each bound is generous beside what a poollet writes
 * (ironpool's holder is `<pool>_<uuid>`, at most 253 + 37 characters would do, but a holder is an
 * identity and 253 is an object name's bound, as the issue asks; the Ready message is the probe's error
 * text) and the condition ones are metav1.Condition's own (type 316, reason 1024, message 32768), so no
 * legitimate write is refused; together they bound a poollet's pool status at about 0.7 MB of strings
 * against etcd's 1.5 MiB an object. Each refusal names the field, its size and the limit.
 */
export const POOLLET_WRITE_BOUNDS = {
  holderIdentity: 253,
  leaseAnnotations: 16,
  leaseAnnotation: 1024,
  leaseLabels: 32,
  conditions: 16,
  conditionType: 316,
  conditionReason: 1024,
  conditionMessage: 32768,
  state: 63,
  classes: 256,
  className: 253,
  addresses: 64,
  address: 253,
  resources: 64,
  resourceName: 316,
} as const

const B = POOLLET_WRITE_BOUNDS
const IS_LEASE_WRITE = "request.operation != 'DELETE' && request.resource.group == 'coordination.k8s.io' && request.resource.resource == 'leases'"
const isPoolWrite = (kinds: readonly PoolKind[]) => `request.operation != 'DELETE' && (${kinds.map((k) => `(request.resource.group == ${quote(k.group)} && request.resource.resource == ${quote(k.plural)})`).join(' || ')})`

/** A validation that holds unless `applies` and the bound is broken; its message names the field, what was found and the limit. */
function bound(applies: string, holds: string, found: string): Manifest {
  return {expression: `!(${applies}) || (${holds})`, messageExpression: `${found} + ' in ' + variables.target + ' (written by ' + ${USER} + ')'`, reason: 'Invalid'}
}

const str = (n: number) => `'${n}'`

function sizeValidations(kinds: readonly PoolKind[]): Manifest[] {
  const pool = isPoolWrite(kinds)
  const status = `${pool} && has(object.status)`
  const conditions = `${status} && has(object.status.conditions)`
  /** A string field of every condition: the first too long is named by its type. */
  const conditionField = (field: 'type' | 'reason' | 'message', max: number) => {
    const tooLong = `object.status.conditions.filter(c, has(c.${field}) && size(c.${field}) > ${max})`
    // The type names the condition (cut to 64 characters: CEL's substring fails past a string's end).
    const type = `${tooLong}[0].type`
    return bound(conditions, `object.status.conditions.all(c, !has(c.${field}) || size(c.${field}) <= ${max})`, `'status.conditions[type=' + (size(${type}) > 64 ? ${type}.substring(0, 64) + '…' : ${type}) + '].${field} is ' + string(size(${tooLong}[0].${field})) + ' characters, more than ${max}'`)
  }
  const list = (field: string, max: number, item: string, itemMax: number) => [
    bound(`${status} && has(object.status.${field})`, `size(object.status.${field}) <= ${max}`, `'status.${field} has ' + string(size(object.status.${field})) + ' entries, more than ' + ${str(max)}`),
    bound(`${status} && has(object.status.${field})`, `object.status.${field}.all(e, !has(e.${item}) || size(e.${item}) <= ${itemMax})`, `'a status.${field}[].${item} is longer than ' + ${str(itemMax)} + ' characters'`),
  ]
  const resources = (field: string) => [
    bound(`${status} && has(object.status.${field})`, `size(object.status.${field}) <= ${B.resources} && object.status.${field}.all(k, size(k) <= ${B.resourceName})`, `'status.${field} has more than ${B.resources} resources, or a resource name longer than ${B.resourceName} characters (' + string(size(object.status.${field})) + ' resources)'`),
  ]
  // A Lease's annotations and labels: a poollet writes none, but keeps what the server has (another
  // writer's, an admin's), so an update that leaves them as they were is admitted whatever they are.
  const unchanged = (field: string) => `(request.operation == 'UPDATE' && has(oldObject.metadata.${field}) && object.metadata.${field} == oldObject.metadata.${field})`
  return [
    bound(
      `${IS_LEASE_WRITE} && has(object.metadata.annotations)`,
      `${unchanged('annotations')} || (size(object.metadata.annotations) <= ${B.leaseAnnotations} && object.metadata.annotations.all(k, size(k) + size(object.metadata.annotations[k]) <= ${B.leaseAnnotation}))`,
      `'metadata.annotations has ' + string(size(object.metadata.annotations)) + ' entries; a poollet may write at most ${B.leaseAnnotations}, each key and value together at most ${B.leaseAnnotation} characters, or leave them as they are'`,
    ),
    bound(
      `${IS_LEASE_WRITE} && has(object.metadata.labels)`,
      `${unchanged('labels')} || size(object.metadata.labels) <= ${B.leaseLabels}`,
      `'metadata.labels has ' + string(size(object.metadata.labels)) + ' entries, more than ${B.leaseLabels}, and a poollet may only leave them as they are'`,
    ),
    bound(
      `${IS_LEASE_WRITE} && has(object.spec) && has(object.spec.holderIdentity)`,
      `size(object.spec.holderIdentity) <= ${B.holderIdentity}`,
      `'spec.holderIdentity is ' + string(size(object.spec.holderIdentity)) + ' characters, more than ${B.holderIdentity}'`,
    ),
    bound(conditions, `size(object.status.conditions) <= ${B.conditions}`, `'status.conditions has ' + string(size(object.status.conditions)) + ' entries, more than ${B.conditions}'`),
    conditionField('type', B.conditionType),
    conditionField('reason', B.conditionReason),
    conditionField('message', B.conditionMessage),
    bound(`${status} && has(object.status.state)`, `size(object.status.state) <= ${B.state}`, `'status.state is ' + string(size(object.status.state)) + ' characters, more than ${B.state}'`),
    // Every kind's class list; a kind without the field never has it (pruned by the CRD, absent in IronCore's API).
    ...['availableMachineClasses', 'availableVolumeClasses', 'availableBucketClasses'].flatMap((field) => list(field, B.classes, 'name', B.className)),
    ...list('addresses', B.addresses, 'address', B.address),
    ...resources('capacity'),
    ...resources('allocatable'),
  ]
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
      validations: [...kinds.map(validation), eventValidation(kinds), ...sizeValidations(kinds)],
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
