/** When the controller holds its hand: blind, not leader, too many stale at once; and forgetting deleted pools. */
import {expect} from 'chai'
import {GRACE, LifecycleFixture, tripBreaker} from '../../../support/lifecycle-fixture.ts'

describe('controller lifecycle: guards', () => {
  it('marks nothing while its view is not whole, even long past the grace period', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE - 1000)
    fx.engine.setViewWhole(false)
    fx.store.script.forbid('writeConditions')
    await fx.advance(5 * GRACE)
    expect(fx.writes).to.equal(0)
    expect(fx.clock.pending).to.equal(0)
  })

  it('blind time is not silence: each deadline moves by the spell, and the silence before it still counts', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('a', {ready: 'True'})
    await fx.advance(GRACE - 10_000)
    fx.putPool('b', {ready: 'True'})
    fx.engine.setViewWhole(false)
    fx.store.script.forbid('writeConditions')
    await fx.advance(3 * GRACE)
    fx.store.script.allow('writeConditions')
    const whole = fx.clock.monotonic()
    fx.engine.setViewWhole(true)
    expect(fx.engine.nextLook('a')).to.equal(whole + 10_000)
    expect(fx.engine.nextLook('b')).to.equal(whole + GRACE)
    await fx.advance(10_000 - 1)
    expect(fx.writes).to.equal(0)
    await fx.advance(1)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['a'])
    expect(fx.marks[0]?.delayMs, 'no blind time in the delay').to.equal(0)
    await fx.advance(GRACE - 10_000)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['a', 'b'])
  })

  it('a spell in which events may have been missed (a pause, a relist) restarts every grace period', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('a', {ready: 'True'})
    fx.putPool('b', {ready: 'False'})
    await fx.advance(GRACE - 1000)
    fx.engine.setViewWhole(false)
    await fx.advance(3 * GRACE)
    const whole = fx.clock.monotonic()
    fx.engine.setViewWhole(true, {sinceMs: 0, lost: true})
    expect(fx.engine.nextLook('a')).to.equal(whole + GRACE)
    await fx.advance(GRACE - 1)
    expect(fx.writes).to.equal(0)
    await fx.advance(1)
    expect(fx.writes).to.equal(2)
  })

  it('a spell seen late is cut out from when it began: a pool that fell due meanwhile is not marked', async () => {
    const fx = new LifecycleFixture()
    const confirm: string[] = []
    fx.engine['options'].confirmLease = (name) => {
      confirm.push(name)
      return Promise.reject(new Error('no answer within 5000 ms'))
    }
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE + 20_000)
    expect(confirm.length, 'due at 50 s: confirms failed').to.be.greaterThan(0)
    // The API had been out since 45 s: the sight is sure only now, 25 s later.
    fx.engine.setViewWhole(false, {sinceMs: 25_000, lost: false})
    await fx.advance(60_000)
    fx.engine['options'].confirmLease = () => Promise.resolve(undefined)
    const whole = fx.clock.monotonic()
    fx.engine.setViewWhole(true)
    expect(fx.engine.overdueStats().pools, 'at 45 s of silence: not overdue').to.equal(0)
    expect(fx.engine.nextLook('p')).to.equal(whole + 5000)
    await fx.advance(5000)
    expect(fx.ready('p')?.status).to.equal('Unknown')
  })

  it('starts blind: nothing is marked before the first whole view', async () => {
    const fx = new LifecycleFixture({active: false})
    fx.engine.setLeader(true)
    fx.putPool('p', {ready: 'True'})
    await fx.advance(2 * GRACE)
    expect(fx.writes).to.equal(0)
    fx.engine.setViewWhole(true)
    await fx.advance(GRACE)
    expect(fx.writes).to.equal(1)
  })

  it('writes nothing when not the leader', async () => {
    const fx = new LifecycleFixture({active: false})
    fx.engine.setViewWhole(true)
    fx.store.script.forbid('writeConditions')
    fx.putPool('p', {ready: 'True'})
    await fx.advance(5 * GRACE)
    expect(fx.writes).to.equal(0)
    expect(fx.clock.pending).to.equal(0)
  })

  it('stops writing at once on losing leadership', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE - 1)
    fx.engine.setLeader(false)
    fx.store.script.forbid('writeConditions')
    await fx.advance(5 * GRACE)
    expect(fx.writes).to.equal(0)
  })

  it('a write in flight when leadership is lost is not retried after a conflict', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    fx.store.script.beforeCall('writeConditions', 1, () => {
      fx.engine.setLeader(false)
      const pool = fx.store.peek('p')
      if (pool === undefined) throw new Error('test setup: pool p is missing')
      fx.store.put(pool)
    })
    await fx.advance(GRACE)
    expect(fx.store.script.log).to.deep.equal(['writeConditions', 'get'])
    expect(fx.ready('p')?.status).to.equal('True')
  })

  it('gaining leadership keeps the evidence this process saw as a standby: a pool silent for longer than the grace is judged at once', async () => {
    const fx = new LifecycleFixture({active: false})
    fx.engine.setViewWhole(true)
    fx.putPool('p', {ready: 'True'})
    fx.putPool('q', {ready: 'True'})
    await fx.advance(3 * GRACE)
    // q renewed a moment before leadership came: its silence is that moment only.
    fx.renew('q', 'renewed')
    fx.engine.setLeader(true)
    expect(fx.engine.record('p')?.lastChange, 'p: silent since first sight').to.equal(0)
    await fx.advance(1)
    expect(fx.writes).to.equal(1)
    expect(fx.ready('p')?.status).to.equal('Unknown')
    expect(fx.ready('q')?.status).to.equal('True')
    await fx.advance(GRACE)
    expect(fx.ready('q')?.status).to.equal('Unknown')
  })

  it('trips the breaker when more pools are stale at once than allowed: marks none, reports once', async () => {
    const fx = new LifecycleFixture({maxUnhealthy: {kind: 'count', count: 2}})
    await tripBreaker(fx)
    expect(fx.writes).to.equal(0)
    expect(fx.breakers).to.deep.equal([{transition: 'tripped', unhealthy: 3, total: 5, limit: {kind: 'count', count: 2}}])
    expect(fx.logger.at('warn')).to.have.length(1)
    expect(fx.engine.breakerState).to.deep.equal({tripped: true, unhealthy: 3, total: 5})
  })

  it('recovers when the number falls back: reports once; the pools still stale get a fresh grace period, then are marked', async () => {
    const fx = new LifecycleFixture({maxUnhealthy: {kind: 'percent', percent: 50}})
    for (const name of ['a', 'b', 'c', 'd']) fx.putPool(name, {ready: 'True'})
    await fx.advance(GRACE + GRACE / 5)
    expect(fx.writes).to.equal(0)
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped'])
    fx.renew('a', 'r1')
    fx.renew('b', 'r1')
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped', 'recovered'])
    await fx.advance(0)
    const statuses = () => ['a', 'b', 'c', 'd'].map((n) => fx.ready(n)?.status)
    expect(statuses(), 'not at once: c and d may be seconds from their renewal').to.deep.equal(['True', 'True', 'True', 'True'])
    // a and b go on renewing; c and d stay silent for a grace period and the hold, and are marked.
    for (let s = 1; s <= (GRACE + GRACE / 5) / 5000 + 1; s++) {
      await fx.advance(5000)
      fx.renew('a', `r1-${s}`)
      fx.renew('b', `r1-${s}`)
    }
    expect(statuses()).to.deep.equal(['True', 'True', 'Unknown', 'Unknown'])
    expect(fx.breakers).to.have.length(2)
    expect(fx.logger.at('info').filter((e) => /marking resumes/.test(e.msg))).to.have.length(1)
  })

  it('close() drops every timer and writes nothing afterwards', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    await fx.engine.close()
    expect(fx.clock.pending).to.equal(0)
    fx.engine.setLeader(true)
    await fx.advance(2 * GRACE)
    expect(fx.writes).to.equal(0)
  })

  it('forgets a deleted pool: no growth and no timer left over many create/delete cycles', async () => {
    const fx = new LifecycleFixture()
    for (let i = 0; i < 1000; i++) {
      fx.putPool(`p${i % 10}`, {ready: 'True'})
      fx.renew(`p${i % 10}`, `r${i}`)
      if (i % 10 === 9) for (let j = 0; j < 10; j++) fx.deletePool(`p${j}`)
      await fx.advance(100)
    }
    expect(fx.engine.trackedPools).to.equal(0)
    expect(fx.engine.record('p0')).to.be.undefined
    expect(fx.clock.pending).to.equal(0)
    await fx.advance(2 * GRACE)
    expect(fx.writes).to.equal(0)
  })
})
