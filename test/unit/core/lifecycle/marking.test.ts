/** The Unknown write: what it contains, that it happens once, and how conflicts and errors are handled. */
import {expect} from 'chai'
import {ConflictError} from '../../../../src/core/errors.ts'
import {GRACE, LifecycleFixture} from '../../../support/lifecycle-fixture.ts'

describe('controller lifecycle: marking Unknown', () => {
  it('writes Unknown once: its own write is not progress, and silence after it writes nothing more', async () => {
    const fx = new LifecycleFixture()
    const t0 = fx.clock.monotonic()
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE)
    expect(fx.writes).to.equal(1)
    const marked = fx.store.peek('p')?.metadata.resourceVersion
    await fx.advance(10 * GRACE)
    expect(fx.writes).to.equal(1)
    expect(fx.store.peek('p')?.metadata.resourceVersion).to.equal(marked)
    expect(fx.engine.record('p')).to.deep.include({readyStatus: 'Unknown', lastChange: t0})
    expect(fx.events.events).to.have.length(1)
    expect(fx.clock.pending).to.equal(0)
  })

  it('absorbs its own write before the watch delivers it', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    await fx.clock.advance(GRACE)
    expect(fx.engine.record('p')).to.deep.include({readyStatus: 'Unknown', observedGeneration: 1})
    await fx.clock.advance(5 * GRACE)
    expect(fx.writes).to.equal(1)
  })

  it('marks a silent pool again when someone removed its Ready condition', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE)
    fx.putPool('p', {})
    await fx.advance(0)
    expect(fx.writes).to.equal(2)
    expect(fx.ready('p')?.status).to.equal('Unknown')
  })

  it('creates the Ready condition when it is absent, with the kind’s reason, message and generation', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {generation: 7})
    await fx.advance(GRACE)
    const ready = fx.ready('p')
    expect(ready).to.deep.include({
      type: 'Ready',
      status: 'Unknown',
      reason: 'MachinePoolStatusUnknown',
      message: 'machinepoollet stopped posting machine pool status.',
      observedGeneration: 7,
    })
    expect(ready?.lastTransitionTime).to.equal('2026-01-01T00:00:50Z')
  })

  it('keeps the other conditions and status fields as they were', async () => {
    const fx = new LifecycleFixture()
    const other = {type: 'Scheduled', status: 'True' as const, reason: 'Fine', message: 'yes', lastTransitionTime: '2025-12-31T00:00:00Z'}
    fx.putPool('p', {ready: 'True', extra: [other]})
    await fx.advance(GRACE)
    const status = fx.store.peek('p')?.status
    expect(status?.state).to.equal('Available')
    expect(status?.conditions).to.have.length(2)
    expect(status?.conditions?.[0]).to.deep.equal(other)
    expect(status?.conditions?.[1]).to.deep.include({type: 'Ready', status: 'Unknown'})
  })

  it('on a conflict re-reads the pool, and does not mark a pool that progressed meanwhile', async () => {
    const fx = new LifecycleFixture()
    const t0 = fx.clock.monotonic()
    fx.putPool('p', {ready: 'True'})
    // The poollet's write lands between the controller's read and its write; the watch has not delivered it.
    fx.store.script.beforeCall('writeConditions', 1, () => {
      const pool = fx.store.peek('p')
      const ready = pool?.status?.conditions?.[0]
      if (pool === undefined || ready === undefined) throw new Error('test setup: pool p has no Ready')
      ready.status = 'False'
      fx.store.put(pool)
    })
    await fx.clock.advance(GRACE)
    expect(fx.store.script.log).to.deep.equal(['writeConditions', 'get'])
    expect(fx.ready('p')?.status).to.equal('False')
    expect(fx.engine.record('p')?.lastChange).to.equal(t0 + GRACE)
    expect(fx.engine.nextLook('p')).to.equal(t0 + 2 * GRACE)
  })

  it('on a conflict with no progress, re-reads and marks the pool as it is now', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    fx.store.script.beforeCall('writeConditions', 1, () => {
      const pool = fx.store.peek('p')
      if (pool === undefined) throw new Error('test setup: pool p is missing')
      pool.status = {...pool.status, state: 'Pending'}
      fx.store.put(pool)
    })
    await fx.advance(GRACE)
    expect(fx.store.script.log).to.deep.equal(['writeConditions', 'get', 'writeConditions'])
    expect(fx.store.peek('p')?.status).to.deep.include({state: 'Pending'})
    expect(fx.ready('p')?.status).to.equal('Unknown')
  })

  it('after a fresh Ready from a returning poollet, writes nothing more while it keeps renewing', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE)
    expect(fx.writes).to.equal(1)
    fx.putPool('p', {ready: 'True'})
    for (let i = 1; i <= 20; i++) {
      await fx.advance(10_000)
      fx.renew('p', `r${i}`)
    }
    expect(fx.writes).to.equal(1)
    expect(fx.ready('p')?.status).to.equal('True')
  })

  it('logs a failed write and retries it with a doubling backoff, never in a tight loop', async () => {
    const fx = new LifecycleFixture()
    const t0 = fx.clock.monotonic()
    fx.putPool('p', {ready: 'True'})
    fx.store.script.failNext('writeConditions', () => new Error('etcdserver: request timed out'), 3)
    await fx.advance(GRACE)
    expect(fx.writes).to.equal(1)
    expect(fx.engine.nextLook('p')).to.equal(t0 + GRACE + 1000)
    expect(fx.clock.pending).to.equal(1)
    await fx.advance(1000)
    expect(fx.writes).to.equal(2)
    await fx.advance(1999)
    expect(fx.writes).to.equal(2)
    await fx.advance(1)
    expect(fx.writes).to.equal(3)
    await fx.advance(4000)
    expect(fx.writes).to.equal(4)
    expect(fx.ready('p')?.status).to.equal('Unknown')
    expect(fx.logger.at('error').map((e) => e.obj.retryInMs)).to.deep.equal([1000, 2000, 4000])
    expect(fx.marks).to.deep.equal([{name: 'p', deadline: t0 + GRACE, writtenAt: t0 + GRACE + 7000, delayMs: 7000, retries: 3}])
  })

  it('counts a pool overdue while its write fails, with its age past the deadline, until the mark lands', async () => {
    const fx = new LifecycleFixture()
    const failures: string[] = []
    fx.engine['options'].observer.writeFailed = (name) => failures.push(name)
    fx.putPool('p', {ready: 'True'})
    fx.putPool('live', {ready: 'True'})
    fx.store.script.failNext('writeConditions', () => new Error('etcdserver: request timed out'), 2)
    await fx.advance(GRACE / 2)
    fx.renew('live', 'r1')
    await fx.advance(GRACE / 2)
    expect(fx.engine.overdueStats()).to.deep.equal({pools: 1, oldestMs: 0})
    await fx.advance(999)
    expect(fx.engine.overdueStats()).to.deep.equal({pools: 1, oldestMs: 999})
    expect(failures).to.deep.equal(['p'])
    await fx.advance(2001)
    expect(failures).to.deep.equal(['p', 'p'])
    expect(fx.ready('p')?.status).to.equal('Unknown')
    expect(fx.engine.overdueStats()).to.deep.equal({pools: 0, oldestMs: 0})
  })

  it('stops retrying when conflicts outlast the attempts and the pool then progresses', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    fx.store.script.failNext('writeConditions', () => new ConflictError('modified'), 5)
    await fx.advance(GRACE)
    expect(fx.writes).to.equal(5)
    expect(fx.logger.at('error')).to.have.length(1)
    fx.renew('p', 'r1')
    await fx.advance(GRACE - 1)
    expect(fx.writes).to.equal(5)
  })

  it('records an Event and a log line for each pool it marks', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE)
    // The verdict record rides on the Event's annotation (verdict-record.test.ts checks its fields).
    expect(fx.events.events.map(({annotations: _annotations, ...event}) => event)).to.deep.equal([
      {
        kind: 'MachinePool',
        apiVersion: 'compute.ironcore.dev/v1alpha1',
        name: 'p',
        uid: 'uid-p',
        type: 'Warning',
        reason: 'MachinePoolStatusUnknown',
        message: 'machinepoollet stopped posting machine pool status.',
      },
    ])
    expect(fx.logger.at('info').map((e) => e.msg)).to.deep.equal(['pool marked Ready=Unknown'])
  })
})
