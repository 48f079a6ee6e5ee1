/** The Lease written back: the served object with only the holder's five spec fields changed. */
import {expect} from 'chai'
import {toLease, toV1Lease} from '../../../../src/kube/stores/lease-store.ts'

const SERVED = {
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: {
    name: 'p1',
    namespace: 'ironcore-machinepool-lease',
    resourceVersion: '41',
    uid: 'u-1',
    labels: {team: 'storage'},
    annotations: {note: 'kept'},
    ownerReferences: [{apiVersion: 'compute.ironcore.dev/v1alpha1', kind: 'MachinePool', name: 'p1', uid: 'pool-uid'}],
    finalizers: ['example.com/keep'],
  },
  spec: {holderIdentity: 'p1_old', leaseDurationSeconds: 40, renewTime: '2026-12-01T09:00:00.000000Z', leaseTransitions: 2, preferredHolder: 'p1_next', strategy: 'OldestEmulationVersion'},
}

describe('Lease store: what an update sends', () => {
  it('keeps metadata and the spec fields it does not own; changes the holder fields; carries the resourceVersion', () => {
    const lease = toLease(structuredClone(SERVED))
    const sent = toV1Lease({...lease, spec: {...lease.spec, holderIdentity: 'p1_new', renewTime: '2026-12-01T09:00:10.000000Z', leaseTransitions: 3}})
    expect(sent.metadata).to.deep.equal(SERVED.metadata)
    expect(sent.spec).to.deep.equal({...SERVED.spec, holderIdentity: 'p1_new', renewTime: '2026-12-01T09:00:10.000000Z', leaseTransitions: 3})
  })

  it('removes a holder field the core cleared (a released Lease has no holder)', () => {
    const lease = toLease(structuredClone(SERVED))
    const sent = toV1Lease({...lease, spec: {...lease.spec, holderIdentity: undefined}})
    expect(sent.spec).to.not.have.property('holderIdentity')
    expect(sent.spec?.preferredHolder).to.equal('p1_next')
  })

  it('a new Lease (no served object) is just its name, namespace and spec', () => {
    const sent = toV1Lease({name: 'p2', namespace: 'ns', spec: {holderIdentity: 'p2_x', leaseDurationSeconds: 40}})
    expect(sent).to.deep.equal({apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: {name: 'p2', namespace: 'ns'}, spec: {holderIdentity: 'p2_x', leaseDurationSeconds: 40}})
  })

  it('reads a malformed spec field as absent (a negative duration, a non-numeric transitions count)', () => {
    const lease = toLease({metadata: {name: 'p3'}, spec: {leaseDurationSeconds: -5, leaseTransitions: 'x', renewTime: 12}})
    expect(lease.spec).to.deep.equal({holderIdentity: undefined, leaseDurationSeconds: undefined, acquireTime: undefined, renewTime: undefined, leaseTransitions: undefined})
  })
})
