import {expect} from 'chai'
import {formatAge, holderMatchesPool, leaseExpiry, poolView} from '../../../../../src/core/lifecycle/reading/pool-view.ts'
import {POOL_KINDS} from '../../../../../src/core/pool-kinds.ts'
import type {Lease, Pool, PoolCondition} from '../../../../../src/core/types.ts'

const NOW = Date.parse('2026-01-01T12:00:00Z')
const kind = POOL_KINDS.volume

function pool(conditions: NonNullable<Pool['status']>['conditions'] = []): Pool {
  return {apiVersion: 'storage.ironcore.dev/v1alpha1', kind: 'VolumePool', metadata: {name: 'v1'}, status: {conditions}}
}
function lease(spec: Lease['spec']): Lease {
  return {name: 'v1', namespace: kind.leaseNamespace, spec}
}

describe('pool view', () => {
  it('shows Ready, its reason and the age since its last transition', () => {
    const view = poolView(kind, pool([{type: 'Ready', status: 'True', reason: 'HeartbeatReceived', message: 'ok', lastTransitionTime: '2026-01-01T11:58:00Z'}]), undefined, NOW)
    expect(view).to.include({name: 'v1', kind: 'volume', ready: 'True', reason: 'HeartbeatReceived', sinceMs: 120_000, lease: 'missing'})
  })

  it('says None when the pool has no Ready condition', () => {
    expect(poolView(kind, pool(), undefined, NOW).ready).to.equal('None')
  })

  it('calls a Lease valid within its duration and expired past it', () => {
    const fresh = poolView(kind, pool(), lease({holderIdentity: 'v1_x', leaseDurationSeconds: 40, renewTime: '2026-01-01T11:59:30.000000Z'}), NOW)
    expect(fresh).to.include({lease: 'valid', renewedMs: 30_000, holder: 'v1_x', leaseDurationSeconds: 40})
    const stale = poolView(kind, pool(), lease({leaseDurationSeconds: 40, renewTime: '2026-01-01T11:59:00.000000Z'}), NOW)
    expect(stale.lease).to.equal('expired')
  })

  it('says a Lease without renewTime was never renewed', () => {
    expect(poolView(kind, pool(), lease({holderIdentity: 'v1_x'}), NOW).lease).to.equal('no-renew')
  })

  it('warns about a renewTime in the future instead of showing a negative age', () => {
    const view = poolView(kind, pool(), lease({leaseDurationSeconds: 40, renewTime: '2026-01-01T12:05:00.000000Z'}), NOW)
    expect(view.renewedMs).to.equal(0)
    expect(view.skew).to.have.length(1)
    expect(view.skew[0]).to.include('in the future')
  })

  it('tolerates a couple of seconds of clock difference without a warning', () => {
    expect(poolView(kind, pool(), lease({renewTime: '2026-01-01T12:00:01.000000Z'}), NOW).skew).to.deep.equal([])
  })

  it('formats ages as kubectl does', () => {
    const cases: [number | undefined, string][] = [
      [undefined, '<none>'], [0, '0s'], [45_000, '45s'], [119_000, '119s'], [192_000, '3m12s'], [600_000, '10m'],
      [3 * 3600_000, '3h'], [5 * 3600_000 + 4 * 60_000, '5h4m'], [30 * 3600_000, '30h'], [50 * 3600_000, '2d2h'], [400 * 86_400_000, '400d'],
    ]
    for (const [ms, text] of cases) expect(formatAge(ms), String(ms)).to.equal(text)
  })

  it('keeps the timestamps it computed ages from, and when the Lease would expire', () => {
    const view = poolView(
      kind,
      pool([{type: 'Ready', status: 'False', reason: 'RuntimeUnreachable', message: 'down', lastTransitionTime: '2026-01-01T11:58:00Z'}]),
      lease({holderIdentity: 'v1_x', leaseDurationSeconds: 40, renewTime: '2026-01-01T11:59:30.000000Z'}),
      NOW,
    )
    expect(view).to.include({lastTransitionTime: '2026-01-01T11:58:00Z', renewTime: '2026-01-01T11:59:30.000000Z', expiresAt: '2026-01-01T12:00:10.000Z'})
  })

  it('has no expiry without renewTime or duration, or with an unreadable time', () => {
    expect(leaseExpiry({leaseDurationSeconds: 40})).to.equal(undefined)
    expect(leaseExpiry({renewTime: '2026-01-01T11:59:30.000000Z'})).to.equal(undefined)
    expect(leaseExpiry({renewTime: 'yesterday', leaseDurationSeconds: 40})).to.equal(undefined)
  })

  it("matches a holder to its pool only as IronCore's poollets write it: <pool>_<uuid>", () => {
    expect(holderMatchesPool('p1_5f2c', 'p1')).to.be.true
    expect(holderMatchesPool('p10_5f2c', 'p1')).to.be.false
    expect(holderMatchesPool('p1', 'p1')).to.be.false
    expect(holderMatchesPool('other_p1_x', 'p1')).to.be.false
  })
})

describe('poolView: a pool overdue but not marked', () => {
  const ready = pool([{type: 'Ready', status: 'True', reason: 'HeartbeatReceived', message: 'ok'}])
  const renewed = (at: string) => lease({holderIdentity: 'v1_x', leaseDurationSeconds: 40, renewTime: at})

  it('notes a pool Ready=True whose Lease expired more than a lease duration ago, and says when it will be', () => {
    const view = poolView(kind, ready, renewed('2026-01-01T11:58:00.000000Z'), NOW)
    expect(view.notes).to.deep.equal([
      'Ready=True, but its Lease expired 80s ago and it is not marked Unknown: the controller may be blind, held by --max-unhealthy, retrying, or not running (ironpool_controller_pools_overdue)',
    ])
    expect(view.overdueAt).to.equal('2026-01-01T11:59:20.000Z')
  })

  it('says nothing within the grace a controller may take, nor for a pool marked Unknown or not Ready', () => {
    expect(poolView(kind, ready, renewed('2026-01-01T11:59:00.000000Z'), NOW).notes, 'expired 20 s ago').to.deep.equal([])
    const unknown = pool([{type: 'Ready', status: 'Unknown', reason: 'VolumePoolStatusUnknown', message: 'x'}])
    expect(poolView(kind, unknown, renewed('2026-01-01T11:50:00.000000Z'), NOW).notes).to.deep.equal([])
    expect(poolView(kind, pool(), renewed('2026-01-01T11:50:00.000000Z'), NOW).notes).to.deep.equal([])
  })
})

describe('poolView: a kind whose API cannot hold a mark', () => {
  const NOW = Date.parse('2026-01-01T12:00:00Z')
  const bucket = POOL_KINDS.bucket
  const pool = {apiVersion: 'storage.ironcore.dev/v1alpha1', kind: 'BucketPool', metadata: {name: 'b1'}, status: {state: 'Available'}}
  const lease = (renewTime: string) => ({name: 'b1', namespace: bucket.leaseNamespace, spec: {holderIdentity: 'b1_x', leaseDurationSeconds: 40, renewTime}})

  it('notes a stale pool as stale and unmarkable, and says nothing while the Lease is fresh or the kind can be marked', () => {
    expect(poolView(bucket, pool, lease('2026-01-01T11:58:00.000000Z'), NOW, {canMark: false}).notes).to.deep.equal(['stale, cannot be marked: this API has no conditions for bucketpools'])
    expect(poolView(bucket, pool, undefined, NOW, {canMark: false}).notes).to.have.length(1)
    expect(poolView(bucket, pool, lease('2026-01-01T11:59:50.000000Z'), NOW, {canMark: false}).notes).to.deep.equal([])
    expect(poolView(bucket, pool, lease('2026-01-01T11:58:00.000000Z'), NOW).notes).to.deep.equal([])
  })
})

describe('poolView: edges', () => {
  const ready = pool([{type: 'Ready', status: 'True', reason: 'HeartbeatReceived', message: 'ok'}])

  it('says a timestamp that is no time is not one, with no age: a Lease whose renewTime cannot be read counts as never renewed', () => {
    const view = poolView(kind, ready, lease({holderIdentity: 'v1_x', leaseDurationSeconds: 40, renewTime: 'yesterday'}), NOW)
    expect(view.skew).to.deep.equal(['Lease renewTime yesterday is not a time'])
    expect(view).to.include({renewedMs: undefined, lease: 'no-renew'})
  })

  it('names the field whose time lies in the future; exactly the tolerance ahead is no warning', () => {
    const future = poolView(kind, pool([{type: 'Ready', status: 'True', reason: 'r', message: 'm', lastTransitionTime: '2026-01-01T12:01:00Z'}]), undefined, NOW)
    expect(future.skew).to.deep.equal(['Ready lastTransitionTime 2026-01-01T12:01:00Z is in the future: the clocks look skewed'])
    expect(poolView(kind, pool(), lease({renewTime: '2026-01-01T12:00:02.000000Z'}), NOW).skew).to.deep.equal([])
  })

  it('a Lease renewed exactly its duration ago is still valid; expired exactly a duration more is not overdue yet', () => {
    expect(poolView(kind, ready, lease({leaseDurationSeconds: 40, renewTime: '2026-01-01T11:59:20.000000Z'}), NOW).lease).to.equal('valid')
    const edge = poolView(kind, ready, lease({leaseDurationSeconds: 40, renewTime: '2026-01-01T11:58:40.000000Z'}), NOW)
    expect(edge.notes).to.deep.equal([])
    expect(edge.overdueAt).to.equal('2026-01-01T12:00:00.000Z')
  })

  it('a Ready without reason or message (as another writer may leave it) shows them empty', () => {
    expect(poolView(kind, pool([{type: 'Ready', status: 'True'} as PoolCondition]), undefined, NOW)).to.include({ready: 'True', reason: '', message: ''})
  })

  it('a kind that cannot be marked is never overdue, only unmarkable', () => {
    const view = poolView(kind, ready, lease({leaseDurationSeconds: 40, renewTime: '2026-01-01T11:50:00.000000Z'}), NOW, {canMark: false})
    expect(view.overdueAt).to.equal(undefined)
    expect(view.notes).to.deep.equal(['stale, cannot be marked: this API has no conditions for volumepools'])
  })

  it('formats ages at the edges of each unit as kubectl does', () => {
    const cases: [number, string][] = [
      [630_000, '10m'], [179 * 60_000, '179m'], [8 * 3600_000 + 30 * 60_000, '8h'], [48 * 3600_000, '2d'], [72 * 3600_000, '3d'], [8 * 86_400_000 + 5 * 3600_000, '8d'], [7 * 86_400_000 + 5 * 3600_000, '7d5h'],
    ]
    for (const [ms, text] of cases) expect(formatAge(ms), String(ms)).to.equal(text)
  })
})
