/** What restarts a pool's grace period, and what does not. */
import {expect} from 'chai'
import {GRACE, LifecycleFixture} from '../../../support/lifecycle-fixture.ts'

describe('controller lifecycle: progress', () => {
  it('first sight starts the grace period now', async () => {
    const fx = new LifecycleFixture()
    const t0 = fx.clock.monotonic()
    await fx.advance(20_000)
    fx.putPool('p', {ready: 'True'})
    expect(fx.engine.record('p')?.lastChange).to.equal(t0 + 20_000)
    expect(fx.engine.nextLook('p')).to.equal(t0 + 20_000 + GRACE)
    await fx.advance(GRACE - 1)
    expect(fx.writes).to.equal(0)
    await fx.advance(1)
    expect(fx.ready('p')?.status).to.equal('Unknown')
  })

  it('a changed Lease renewTime is progress', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE - 10_000)
    fx.renew('p', '2026-01-01T00:00:40.000000Z')
    await fx.advance(10_000)
    expect(fx.writes).to.equal(0)
    await fx.advance(GRACE - 10_000)
    expect(fx.writes).to.equal(1)
    expect(fx.ready('p')?.status).to.equal('Unknown')
  })

  it('a changed Ready status is progress', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE - 10_000)
    fx.putPool('p', {ready: 'False', reason: 'RuntimeUnreachable'})
    await fx.advance(GRACE - 1)
    expect(fx.writes).to.equal(0)
    await fx.advance(1)
    expect(fx.writes).to.equal(1)
  })

  it('a changed Ready observedGeneration is progress', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True', generation: 1})
    await fx.advance(GRACE - 10_000)
    fx.putPool('p', {ready: 'True', generation: 2})
    await fx.advance(GRACE - 1)
    expect(fx.writes).to.equal(0)
    await fx.advance(1)
    expect(fx.writes).to.equal(1)
  })

  it('a changed reason or message is not progress', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'False', reason: 'RuntimeUnreachable', message: 'dial: refused'})
    await fx.advance(20_000)
    fx.putPool('p', {ready: 'False', reason: 'RuntimeUnreachable', message: 'dial: timeout'})
    await fx.advance(10_000)
    fx.putPool('p', {ready: 'False', reason: 'SomethingElse', message: 'dial: timeout'})
    await fx.advance(GRACE - 30_000)
    expect(fx.writes).to.equal(1)
    expect(fx.ready('p')?.status).to.equal('Unknown')
  })

  it('marks at exactly the grace period (>=), not a millisecond before', async () => {
    const fx = new LifecycleFixture()
    const t0 = fx.clock.monotonic()
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE - 1)
    expect(fx.writes).to.equal(0)
    await fx.advance(1)
    expect(fx.writes).to.equal(1)
    expect(fx.marks).to.deep.equal([{name: 'p', deadline: t0 + GRACE, writtenAt: t0 + GRACE, delayMs: 0, retries: 0}])
  })

  it('a deleted Lease is silence: the grace period runs on from the last renewal', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    await fx.advance(10_000)
    fx.renew('p', 'r1')
    fx.leases.delete('p')
    fx.engine.leaseDeleted('p')
    await fx.advance(GRACE - 1)
    expect(fx.writes).to.equal(0)
    await fx.advance(1)
    expect(fx.ready('p')?.status).to.equal('Unknown')
  })

  it('a Lease seen before its pool is not taken for a renewal afterwards', async () => {
    const fx = new LifecycleFixture()
    fx.renew('p', 'r1')
    fx.putPool('p', {ready: 'True'})
    await fx.advance(10_000)
    fx.renew('p', 'r1') // a resync of the same Lease
    await fx.advance(GRACE - 10_000)
    expect(fx.writes).to.equal(1)
  })

  it("ignores a Lease from another kind's namespace", async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    await fx.advance(10_000)
    fx.engine.leaseUpserted({name: 'p', namespace: 'ironcore-volumepool-lease', spec: {renewTime: 'r9'}})
    await fx.advance(GRACE - 10_000)
    expect(fx.writes).to.equal(1)
  })
})
