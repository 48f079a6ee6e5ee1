import {expect} from 'chai'
import {inspectLease} from '../../../src/cli/report/lease-inspection.ts'
import {leaseReport} from '../../../src/cli/report/lease-report.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import type {Lease, Pool} from '../../../src/core/types.ts'

const NOW = Date.parse('2026-01-01T12:00:00Z')
const kind = POOL_KINDS.volume
const pool: Pool = {
  apiVersion: 'storage.ironcore.dev/v1alpha1',
  kind: 'VolumePool',
  metadata: {name: 'v1'},
  status: {conditions: [{type: 'Ready', status: 'True', reason: 'HeartbeatReceived', message: 'volume runtime status probe succeeded', lastTransitionTime: '2026-01-01T11:50:00Z'}]},
}
function lease(spec: Partial<Lease['spec']> = {}): Lease {
  return {
    name: 'v1',
    namespace: kind.leaseNamespace,
    resourceVersion: '42',
    spec: {holderIdentity: 'v1_abc', leaseDurationSeconds: 40, acquireTime: '2026-01-01T11:00:00.000000Z', renewTime: '2026-01-01T11:59:50.000000Z', leaseTransitions: 3, ...spec},
  }
}

describe('lease inspection', () => {
  it('shows a healthy Lease beside Ready, with no problem', () => {
    const inspection = inspectLease(kind, 'v1', pool, lease(), NOW)
    expect(inspection.problems).to.deep.equal([])
    expect(inspection.missing).to.be.false
    expect(inspection.lease).to.deep.include({exists: true, holder: 'v1_abc', holderMatchesPool: true, renewedMs: 10_000, expiresAt: '2026-01-01T12:00:30.000Z', expiresInMs: 30_000, state: 'valid', transitions: 3, resourceVersion: '42'})
    expect(inspection.pool).to.deep.include({exists: true, ready: 'True', reason: 'HeartbeatReceived', sinceMs: 600_000})
    expect(leaseReport(inspection)).to.deep.equal([
      'Lease:           ironcore-volumepool-lease/v1',
      'Holder:          v1_abc',
      'Acquired:        2026-01-01T11:00:00.000000Z',
      'Renewed:         2026-01-01T11:59:50.000000Z (10s ago)',
      'Duration:        40s',
      'Expires:         2026-01-01T12:00:30.000Z (in 30s; not expired)',
      'Transitions:     3',
      'ResourceVersion: 42',
      'Pool:            volumepool v1',
      'Ready:           True (HeartbeatReceived, since 10m): volume runtime status probe succeeded',
    ])
  })

  it('says when the Lease has expired by the local clock', () => {
    const inspection = inspectLease(kind, 'v1', pool, lease({renewTime: '2026-01-01T11:58:00.000000Z'}), NOW)
    expect(inspection.lease).to.deep.include({state: 'expired', expiresInMs: -80_000})
    expect(inspection.problems).to.deep.equal(['Lease ironcore-volumepool-lease/v1 expired at 2026-01-01T11:58:40.000Z by the local clock'])
    expect(leaseReport(inspection)).to.include('Expires:         2026-01-01T11:58:40.000Z (expired 80s ago)')
  })

  it('says plainly when the holder is not the pool', () => {
    const inspection = inspectLease(kind, 'v1', pool, lease({holderIdentity: 'v2_abc'}), NOW)
    expect(inspection.problems).to.deep.equal(["holder v2_abc does not match pool v1: a poollet holds its pool's Lease as v1_<uuid>"])
    expect(inspection.missing).to.be.false
    expect(leaseReport(inspection)).to.include('Holder:          v2_abc  (does not match the pool!)')
  })

  it('says plainly when the Lease does not exist', () => {
    const inspection = inspectLease(kind, 'v1', pool, undefined, NOW)
    expect(inspection.missing).to.be.true
    expect(inspection.problems).to.deep.equal(['Lease ironcore-volumepool-lease/v1 does not exist: no poollet has heartbeated for this pool'])
    expect(leaseReport(inspection)[0]).to.equal('Lease: ironcore-volumepool-lease/v1 does not exist')
  })

  it('says plainly when the pool does not exist, and still shows its Lease', () => {
    const inspection = inspectLease(kind, 'v1', undefined, lease(), NOW)
    expect(inspection.missing).to.be.true
    expect(inspection.problems).to.deep.equal(['volumepool v1 does not exist (kubectl get volumepools; check the name and --kind)'])
    expect(leaseReport(inspection)).to.include('Pool:            volumepool v1 does not exist')
  })
})
