import {expect} from 'chai'
import {validateLease, validatePool} from '../../../../src/deploy/crds/pool-validator.ts'
import {projectLease, projectPool} from '../../../../src/kube/watch/projections.ts'
import {toLease} from '../../../../src/kube/stores/lease-store.ts'

const managedFields = [{manager: 'x', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: {'f:status': {}}}]
const conditions = [
  {type: 'Ready', status: 'True', reason: 'HeartbeatReceived', message: 'ok', observedGeneration: 3, lastUpdateTime: null, lastTransitionTime: '2026-01-01T00:00:00Z'},
  {type: 'Other', status: 'False', reason: 'Theirs', message: 'kept for the merge patch'},
]
const pool = {
  apiVersion: 'compute.ironcore.dev/v1alpha1',
  kind: 'MachinePool',
  metadata: {name: 'p1', uid: 'u1', resourceVersion: '42', generation: 3, labels: {a: 'b'}, annotations: {big: 'x'.repeat(1000)}, creationTimestamp: '2026-01-01T00:00:00Z', managedFields},
  spec: {providerID: 'p://1', taints: [{key: 'k', effect: 'NoSchedule'}]},
  status: {state: 'Ready', conditions, availableMachineClasses: [{name: 'c1'}], addresses: [{type: 'x', address: 'y'}]},
}

describe('what the controller caches keep of each object (projections.ts)', () => {
  it('a pool: kind, name, uid, resourceVersion, generation and the whole conditions list; no managedFields, labels, spec or other status', () => {
    expect(projectPool(structuredClone(pool))).to.deep.equal({
      apiVersion: 'compute.ironcore.dev/v1alpha1',
      kind: 'MachinePool',
      metadata: {name: 'p1', uid: 'u1', resourceVersion: '42', generation: 3},
      status: {conditions},
    })
    expect(projectPool({metadata: {name: 'bare'}})).to.deep.equal({apiVersion: undefined, kind: undefined, metadata: {name: 'bare'}})
  })

  it('a pool keeps of its labels only those asked for (the zone labels), and none when it has none of them', () => {
    const zoned = {...structuredClone(pool), metadata: {...structuredClone(pool.metadata), labels: {a: 'b', 'topology.ironcore.dev/zone': 'z1'}}}
    expect(projectPool(zoned, ['topology.ironcore.dev/zone', 'topology.kubernetes.io/zone']).metadata).to.deep.equal({name: 'p1', uid: 'u1', resourceVersion: '42', generation: 3, labels: {'topology.ironcore.dev/zone': 'z1'}})
    expect(projectPool(structuredClone(pool), ['topology.ironcore.dev/zone']).metadata).to.not.have.property('labels')
  })

  it('copies values as served: a field of the wrong type still fails validation, and a valid pool validates the same', () => {
    expect(validatePool(projectPool({metadata: {name: 'p', generation: 'three'}})).ok).to.equal(false)
    expect(validatePool(projectPool({metadata: {name: 'p'}, status: {conditions: 'none'}})).ok).to.equal(false)
    const whole = validatePool(structuredClone(pool))
    const projected = validatePool(projectPool(structuredClone(pool)))
    expect(projected.ok && whole.ok && projected.problem).to.deep.equal(whole.ok && whole.problem)
  })

  it('a Lease: name, namespace, resourceVersion and the holder fields, which toLease reads as from the whole object', () => {
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {name: 'p1', namespace: 'ns', uid: 'u', resourceVersion: '9', ownerReferences: [{apiVersion: 'v1', kind: 'Pod', name: 'o', uid: 'o1'}], managedFields},
      spec: {holderIdentity: 'p1_abc', leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:00.000000Z', acquireTime: '2026-01-01T00:00:00.000000Z', leaseTransitions: 1, preferredHolder: 'x'},
    }
    const projected = projectLease(structuredClone(lease))
    expect(projected).to.deep.equal({metadata: {name: 'p1', namespace: 'ns', resourceVersion: '9'}, spec: {holderIdentity: 'p1_abc', leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:00.000000Z', acquireTime: '2026-01-01T00:00:00.000000Z', leaseTransitions: 1}})
    const {raw: _a, ...fromProjection} = toLease(projected)
    const {raw: _b, ...fromWhole} = toLease(lease)
    expect(fromProjection).to.deep.equal(fromWhole)
    expect(validateLease(projectLease({metadata: {name: 'x'}, spec: {leaseDurationSeconds: -1}})).ok).to.equal(validateLease({metadata: {name: 'x'}, spec: {leaseDurationSeconds: -1}}).ok)
  })
})
