/**
 * Writing only what the serving API can hold: the new Ready entry carries only the plan's fields; with
 * no conditions nothing is written; a write the server did not keep is not done. For the poollet's
 * heartbeat and the controller's lifecycle alike.
 */
import {expect} from 'chai'
import {Heartbeat} from '../../../src/core/heartbeat/heartbeat.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {writeReady} from '../../../src/core/ready-writer.ts'
import type {Pool, StatusWritePlan} from '../../../src/core/types.ts'
import {FakeClock} from '../../support/fake-clock.ts'
import {FakeLogger} from '../../support/fake-logger.ts'
import {FakeLeaseStore, FakePoolStatusStore} from '../../support/fake-stores.ts'
import {GRACE, LifecycleFixture} from '../../support/lifecycle-fixture.ts'

const TRUE = {status: 'True', reason: 'HeartbeatReceived', message: 'volume runtime status probe succeeded'} as const
const NO_LAST_UPDATE: StatusWritePlan = {conditions: true, conditionFields: ['type', 'status', 'reason', 'message', 'observedGeneration', 'lastTransitionTime']}
const NO_CONDITIONS: StatusWritePlan = {conditions: false, conditionFields: []}

function seed(store: FakePoolStatusStore, kind = POOL_KINDS.volume): Pool {
  return store.put({apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, metadata: {name: 'p', generation: 1}, status: {state: 'Available', conditions: [{type: 'Other', status: 'True', reason: 'R', message: 'm', lastUpdateTime: null}]}})
}

describe('write plan: writeReady', () => {
  it('omits the fields the server lacks (VolumePool on IronCore: no lastUpdateTime), other entries untouched', async () => {
    const store = new FakePoolStatusStore()
    seed(store)
    const result = await writeReady({store, clock: new FakeClock(), name: 'p', decide: () => TRUE, plan: NO_LAST_UPDATE})
    expect(result.outcome).to.equal('written')
    const [other, ready] = store.peek('p')!.status!.conditions!
    expect(other).to.deep.equal({type: 'Other', status: 'True', reason: 'R', message: 'm', lastUpdateTime: null})
    expect(Object.keys(ready!)).to.deep.equal(['type', 'status', 'reason', 'message', 'lastTransitionTime'])
  })

  it('writes nothing when the kind has no conditions (BucketPool on IronCore)', async () => {
    const store = new FakePoolStatusStore()
    seed(store, POOL_KINDS.bucket)
    const result = await writeReady({store, clock: new FakeClock(), name: 'p', decide: () => TRUE, plan: NO_CONDITIONS})
    expect(result.outcome).to.equal('not-writable')
    expect(store.script.calls('writeConditions')).to.equal(0)
  })

  it('counts a write as done only if the returned object carries it: an API that drops the list answers not-held', async () => {
    const store = new FakePoolStatusStore()
    seed(store, POOL_KINDS.bucket)
    store.dropsConditions = true
    const result = await writeReady({store, clock: new FakeClock(), name: 'p', decide: () => TRUE})
    expect(result.outcome).to.equal('not-held')
    expect(store.script.calls('writeConditions')).to.equal(1)
  })
})

describe('write plan: the poollet heartbeat', () => {
  function heartbeat(plan: StatusWritePlan, pools: FakePoolStatusStore, logger: FakeLogger) {
    return new Heartbeat({
      kind: POOL_KINDS.bucket,
      poolName: 'p',
      holderIdentity: 'p_me',
      probe: {probe: () => Promise.resolve()},
      leases: new FakeLeaseStore(),
      pools,
      clock: new FakeClock(),
      logger,
      plan,
    })
  }

  it('with no conditions: renews the Lease, reads and writes no pool, and reports not-writable', async () => {
    const pools = new FakePoolStatusStore()
    seed(pools, POOL_KINDS.bucket)
    const logger = new FakeLogger()
    const result = await heartbeat(NO_CONDITIONS, pools, logger).tickOnce(new AbortController().signal)
    expect(result.lease.outcome).to.equal('created')
    expect(result.ready).to.deep.equal({outcome: 'not-writable', status: 'True'})
    expect(pools.script.calls('get') + pools.script.calls('writeConditions')).to.equal(0)
  })

  it('a write the API did not keep is not-held: a warning, no Ready line at info', async () => {
    const pools = new FakePoolStatusStore()
    seed(pools, POOL_KINDS.bucket)
    pools.dropsConditions = true
    const logger = new FakeLogger()
    const result = await heartbeat({conditions: true, conditionFields: ['type', 'status', 'reason', 'message']}, pools, logger).tickOnce(new AbortController().signal)
    expect(result.ready.outcome).to.equal('not-held')
    expect(logger.entries.filter((e) => e.level === 'info' && e.msg.includes('Ready='))).to.deep.equal([])
    expect(logger.entries.some((e) => e.level === 'warn' && e.msg.includes('did not keep it'))).to.be.true
  })
})

describe('write plan: the controller lifecycle', () => {
  it('with no conditions: a stale pool is reported once (log, Event, observer), never claimed as marked', async () => {
    const fx = new LifecycleFixture({kind: POOL_KINDS.bucket, plan: NO_CONDITIONS})
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE)
    await fx.advance(5 * GRACE)
    expect(fx.writes).to.equal(0)
    expect(fx.marks).to.deep.equal([])
    expect(fx.unmarkable).to.deep.equal([{name: 'p', reason: 'no-conditions'}])
    expect(fx.events.events.map((e) => `${e.reason}: ${e.message}`)).to.deep.equal(['BucketPoolStaleUnmarked: stale, cannot be marked: this API has no conditions for bucketpools'])
    expect(fx.logger.entries.some((e) => e.msg.includes('marked Ready=Unknown'))).to.be.false
    expect(fx.logger.entries.some((e) => e.level === 'warn' && e.msg === 'pool p stale, cannot be marked: this API has no conditions for bucketpools')).to.be.true
  })

  it('a write the API did not keep is reported as not-held, not as a mark', async () => {
    const fx = new LifecycleFixture({kind: POOL_KINDS.bucket})
    fx.store.dropsConditions = true
    fx.putPool('p', {})
    await fx.advance(GRACE)
    await fx.advance(5 * GRACE)
    expect(fx.writes).to.equal(1)
    expect(fx.marks).to.deep.equal([])
    expect(fx.events.events.map((e) => e.reason)).to.deep.equal(['BucketPoolStaleUnmarked'])
    expect(fx.events.events[0]!.message).to.equal('stale, cannot be marked: the API did not keep the Ready condition written to bucketpools')
  })

  it('an unmarkable pool is tried again after its long backoff, reported once, and marked once the API keeps the write', async () => {
    const fx = new LifecycleFixture({kind: POOL_KINDS.bucket})
    fx.store.dropsConditions = true
    fx.putPool('p', {})
    await fx.advance(GRACE)
    expect(fx.writes).to.equal(1)
    expect(fx.engine.verdict('p')?.state).to.equal('unmarkable')
    expect(fx.engine.nextLook('p'), 'its next look is armed').to.equal(fx.clock.monotonic() + 10 * GRACE)
    await fx.advance(10 * GRACE)
    expect(fx.writes, 'tried again after ten grace periods').to.equal(2)
    expect(fx.unmarkable, 'reported once a spell').to.have.length(1)
    // What dropped the mark is gone: the next try holds.
    fx.store.dropsConditions = false
    await fx.advance(10 * GRACE)
    expect(fx.writes).to.equal(3)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
    expect(fx.events.events.map((e) => e.reason)).to.deep.equal(['BucketPoolStaleUnmarked', 'BucketPoolStatusUnknown'])
    expect(fx.engine.strandedPools()).to.deep.equal([])
  })

  it('after progress, a pool that goes stale again is reported again', async () => {
    const fx = new LifecycleFixture({kind: POOL_KINDS.bucket, plan: NO_CONDITIONS})
    fx.putPool('p', {})
    await fx.advance(GRACE)
    fx.renew('p', '2026-12-01T09:00:00.000000Z')
    await fx.advance(GRACE)
    expect(fx.events.events).to.have.length(2)
    expect(fx.writes).to.equal(0)
  })
})
