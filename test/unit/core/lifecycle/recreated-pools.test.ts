/**
 * A pool deleted, or replaced by a new one under its name, owes nothing of the old one's silence: the
 * rules of poolUpserted() and poolDeleted() that forget it (found undefended by `npm run mutation`,
 * issue 30).
 */
import {expect} from 'chai'
import {GRACE, LifecycleFixture, tripBreaker} from '../../../support/lifecycle-fixture.ts'

describe('controller lifecycle: a pool replaced under its name', () => {
  it('a new pool (new uid) under the name of one whose mark keeps failing starts a grace period of its own: the old write is not retried on it', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    fx.store.script.failNext('writeConditions', () => new Error('etcdserver: request timed out'), 1_000)
    await fx.advance(GRACE)
    expect(fx.engine.overdueStats().pools, 'the old pool is overdue, its write failing').to.equal(1)
    fx.store.script.stopFailing('writeConditions')
    fx.putPool('p', {uid: 'uid-p-2', ready: 'True'})
    const writes = fx.writes
    await fx.advance(GRACE - 1)
    expect(fx.writes, 'nothing written on the new pool within its grace period').to.equal(writes)
    expect(fx.ready('p')?.status).to.equal('True')
    expect(fx.engine.overdueStats().pools).to.equal(0)
    await fx.advance(1)
    expect(fx.ready('p')?.status).to.equal('Unknown')
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
  })

  it('a deleted pool owes nothing: its failing mark is dropped, and one created again later under the name gets a whole grace period', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    fx.store.script.failNext('writeConditions', () => new Error('etcdserver: request timed out'), 1_000)
    await fx.advance(GRACE)
    expect(fx.engine.overdueStats().pools).to.equal(1)
    fx.deletePool('p')
    expect(fx.engine.overdueStats().pools).to.equal(0)
    expect(fx.engine.trackedPools).to.equal(0)
    fx.store.script.stopFailing('writeConditions')
    await fx.advance(GRACE)
    fx.putPool('p', {uid: 'uid-p-2', ready: 'True'})
    const writes = fx.writes
    await fx.advance(GRACE - 1)
    expect(fx.writes).to.equal(writes)
    await fx.advance(1)
    expect(fx.ready('p')?.status).to.equal('Unknown')
  })

  it('deleting the silent pools that tripped the breaker closes it at once: a deleted pool is no unhealthy one', async () => {
    const fx = new LifecycleFixture({maxUnhealthy: {kind: 'count', count: 2}})
    await tripBreaker(fx)
    expect(fx.engine.breakerState.tripped).to.equal(true)
    fx.deletePool('a')
    fx.deletePool('b')
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped', 'recovered'])
    expect(fx.engine.breakerState).to.deep.equal({tripped: false, unhealthy: 0, total: 3})
  })

  it('a new pool under the name of a silent one that tripped the breaker is no unhealthy one: the breaker closes', async () => {
    const fx = new LifecycleFixture({maxUnhealthy: {kind: 'count', count: 2}})
    await tripBreaker(fx)
    expect(fx.engine.breakerState.tripped).to.equal(true)
    fx.putPool('a', {uid: 'uid-a-2', ready: 'True'})
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped', 'recovered'])
    expect(fx.engine.breakerState.tripped).to.equal(false)
  })
})
