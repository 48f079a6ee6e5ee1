import {expect} from 'chai'
import {validateLease, validatePool} from '../../../../../src/deploy/crds/pool-validator.ts'
import {Interner, projectLease, projectPool} from '../../../../../src/kube/watch/caches/projections.ts'
import {toLease} from '../../../../../src/kube/stores/lease-store.ts'

const managedFields = [{manager: 'x', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: {'f:status': {}}}]
const ready = {type: 'Ready', status: 'True', reason: 'HeartbeatReceived', message: 'ok', observedGeneration: 3, lastUpdateTime: null, lastTransitionTime: '2026-01-01T00:00:00Z'}
const conditions = [ready, {type: 'Other', status: 'False', reason: 'Theirs', message: 'kept for the merge patch'}]
const pool = {
  apiVersion: 'compute.ironcore.dev/v1alpha1',
  kind: 'MachinePool',
  metadata: {name: 'p1', uid: 'u1', resourceVersion: '42', generation: 3, labels: {a: 'b'}, annotations: {big: 'x'.repeat(1000)}, creationTimestamp: '2026-01-01T00:00:00Z', managedFields},
  spec: {providerID: 'p://1', taints: [{key: 'k', effect: 'NoSchedule'}]},
  status: {state: 'Ready', conditions, availableMachineClasses: [{name: 'c1'}], addresses: [{type: 'x', address: 'y'}]},
}
const lease = {
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: {name: 'p1', namespace: 'ns', uid: 'u', resourceVersion: '9', ownerReferences: [{apiVersion: 'v1', kind: 'Pod', name: 'o', uid: 'o1'}], managedFields},
  spec: {holderIdentity: 'p1_abc', leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:00.000000Z', acquireTime: '2026-01-01T00:00:00.000000Z', leaseTransitions: 1, preferredHolder: 'x'},
}
/** A served object as JSON.parse makes it: its own copy of every string, as the watch hands it over. */
const parsed = <T>(object: T): T => JSON.parse(JSON.stringify(object)) as T

/** What a verdict and the Unknown write read of a pool, through the shapes the core knows. */
const poolAsRead = (p: ReturnType<typeof projectPool>) => ({
  apiVersion: p.apiVersion,
  kind: p.kind,
  metadata: {name: p.metadata.name, uid: p.metadata.uid, resourceVersion: p.metadata.resourceVersion, generation: p.metadata.generation, labels: p.metadata.labels},
  status: p.status,
})

describe('what the controller caches keep of each object (projections.ts)', () => {
  it('a pool: kind, name, uid, resourceVersion, generation and the whole conditions list; no managedFields, labels, spec or other status', () => {
    const projected = projectPool(parsed(pool))
    expect(poolAsRead(projected)).to.deep.equal({
      apiVersion: 'compute.ironcore.dev/v1alpha1',
      kind: 'MachinePool',
      metadata: {name: 'p1', uid: 'u1', resourceVersion: '42', generation: 3, labels: undefined},
      status: {conditions},
    })
    expect(projected).to.not.have.property('spec')
    expect(JSON.stringify(Object.values(projected))).to.not.include('availableMachineClasses').and.not.include('managedFields').and.not.include('xxxx')
    expect(poolAsRead(projectPool({metadata: {name: 'bare'}}))).to.deep.equal({apiVersion: undefined, kind: undefined, metadata: {name: 'bare', uid: undefined, resourceVersion: undefined, generation: undefined, labels: undefined}, status: undefined})
    // A status with no conditions key has no conditions to read, as served.
    expect(projectPool({metadata: {name: 'p'}, status: {state: 'x'}}).status).to.equal(undefined)
  })

  it('a pool is one flat record: its metadata is the record itself, and its fields are its own, no nested objects but the Ready entry', () => {
    const projected = projectPool(parsed({...pool, status: {conditions: [ready]}}))
    expect(projected.metadata).to.equal(projected)
    const nested = Object.entries(projected).filter(([, value]) => typeof value === 'object' && value !== null)
    expect(nested).to.have.length(1)
    expect(nested[0]![1]).to.deep.equal(ready)
  })

  it('a lone Ready entry is held as parsed, without its list; the list is made on read and carries exactly the entry', () => {
    const served = parsed({...pool, status: {conditions: [ready]}})
    const entry = served.status.conditions[0]
    const projected = projectPool(served)
    expect(projected.status?.conditions).to.have.length(1)
    expect(projected.status?.conditions?.[0]).to.equal(entry)
    expect(projected.status?.conditions?.[0]).to.deep.equal(ready)
    // Made on read: no list is held.
    expect(projected.status?.conditions).to.not.equal(projected.status?.conditions)
  })

  it('other conditions, or a malformed Ready entry, keep the list as served: the write carries it, and the validator removes the bad entry from it for good', () => {
    const served = parsed(pool)
    const list = served.status.conditions
    const projected = projectPool(served)
    expect(projected.status?.conditions).to.equal(list)
    const bad = projectPool(parsed({...pool, status: {conditions: [{...ready, status: 'Maybe'}]}}))
    const result = validatePool(bad)
    expect(result.ok && result.problem?.field).to.equal('/status/conditions/0/status')
    expect(bad.status?.conditions).to.deep.equal([])
  })

  it('the repeated strings of every condition (type, status, reason, message) and the kind go to the intern table; times and names do not', () => {
    const strings = new Interner()
    projectPool(parsed(pool), {strings})
    projectPool(parsed(pool), {strings})
    expect(strings.size).to.equal(['Ready', 'True', 'HeartbeatReceived', 'ok', 'Other', 'False', 'Theirs', 'kept for the merge patch', 'compute.ironcore.dev/v1alpha1', 'MachinePool'].length)
    projectLease(parsed(lease), {strings})
    expect(strings.size, 'the namespace').to.equal(11)
  })

  it('a pool keeps of its labels only those asked for (the zone labels), and none when it has none of them', () => {
    const zoned = {...parsed(pool), metadata: {...parsed(pool.metadata), labels: {a: 'b', 'topology.ironcore.dev/zone': 'z1'}}}
    expect(projectPool(zoned, {keepLabels: ['topology.ironcore.dev/zone', 'topology.kubernetes.io/zone']}).metadata.labels).to.deep.equal({'topology.ironcore.dev/zone': 'z1'})
    expect(projectPool(parsed(pool), {keepLabels: ['topology.ironcore.dev/zone']}).metadata.labels).to.equal(undefined)
  })

  it('copies values as served: a field of the wrong type still fails validation, and a valid pool validates the same', () => {
    expect(validatePool(projectPool({metadata: {name: 'p', generation: 'three'}})).ok).to.equal(false)
    expect(validatePool(projectPool({metadata: {name: 'p'}, status: {conditions: 'none'}})).ok).to.equal(false)
    const whole = validatePool(parsed(pool))
    const projected = validatePool(projectPool(parsed(pool)))
    expect(projected.ok && whole.ok && projected.problem).to.deep.equal(whole.ok && whole.problem)
  })

  it('a Lease: one flat record, its own metadata and spec, with what toLease reads from the whole object but acquireTime', () => {
    const projected = projectLease(parsed(lease))
    expect(projected.metadata).to.equal(projected)
    expect(projected.spec).to.equal(projected)
    expect({...projected}).to.deep.equal({name: 'p1', namespace: 'ns', resourceVersion: '9', holderIdentity: 'p1_abc', leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:00.000000Z', leaseTransitions: 1})
    const {raw: _a, ...fromProjection} = toLease(projected)
    const {raw: _b, ...fromWhole} = toLease(lease)
    expect(fromProjection).to.deep.equal({...fromWhole, spec: {...fromWhole.spec, acquireTime: undefined}})
    expect(validateLease(projectLease({metadata: {name: 'x'}, spec: {leaseDurationSeconds: -1}})).ok).to.equal(validateLease({metadata: {name: 'x'}, spec: {leaseDurationSeconds: -1}}).ok)
    expect(validateLease(projectLease({metadata: {name: 'x'}, spec: {leaseDurationSeconds: -1}})).problem?.field).to.equal('/spec/leaseDurationSeconds')
  })

  it('a pool and its Lease ask the other cache for the name it holds, and keep their own when it holds another (one instance: string-sharing.test.ts)', () => {
    const asked: string[] = []
    const held = projectPool(parsed(pool), {heldName: (name) => (asked.push(name), 'p1')})
    expect(held.metadata.name).to.equal('p1')
    const other = projectLease(parsed(lease), {heldName: (name) => (asked.push(name), 'p2')})
    expect(asked).to.deep.equal(['p1', 'p1'])
    expect(other.metadata.name).to.equal('p1')
  })
})
