/**
 * The engine's breakers at their edges: the window that silences age out of (to its first instant),
 * the stale pools that keep a breaker open past it, a standby that counts nothing, what a recovery
 * restarts (a zone's own pools; pools with a zone on the fleet's recovery; never a marked pool) and
 * forgets, and a zone held sending no confirming read.
 */
import {expect} from 'chai'
import {parseMaxUnhealthy} from '../../../../src/core/lifecycle/mass-silence/max-unhealthy.ts'
import type {ZoneTransition} from '../../../../src/core/lifecycle/mass-silence/zone-breakers.ts'
import {GRACE, LifecycleFixture, renewUntil, tripBreaker, type FixtureOptions} from '../../../support/lifecycle-fixture.ts'

/** a falls silent at GRACE and is marked; b renews until 50 s, falls silent at 100 s. */
async function aThenB(options: FixtureOptions) {
  const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy('1'), breakerHoldMs: 1_000, ...options})
  fx.putPool('a', {ready: 'True'})
  fx.putPool('b', {ready: 'True'})
  await renewUntil(fx, ['b'], GRACE)
  await fx.advance(GRACE + 5_000)
  return fx
}

describe('controller lifecycle: the breakers at their edges', () => {
  it('a silence older than the window no longer counts: two pools silent 50 s apart with a 10 s window are judged one by one', async () => {
    const fx = await aThenB({breakerWindowMs: 10_000})
    expect(fx.breakers).to.deep.equal([])
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['a', 'b'])
  })

  it('a silence exactly one window old still counts: two pools silent 50 s apart with a 50 s window trip it', async () => {
    const fx = await aThenB({breakerWindowMs: GRACE})
    expect(fx.breakers[0]).to.deep.include({transition: 'tripped', unhealthy: 2})
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['a'])
  })

  it('stale, unmarked pools keep the breaker open after their silences have left the window', async () => {
    const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy('2'), breakerWindowMs: 10_000})
    await tripBreaker(fx)
    // A new pool is judged: the silences of 50 s are long out of the window; a, b and c are still stale.
    fx.putPool('f', {ready: 'True'})
    expect(fx.engine.breakerState).to.deep.equal({tripped: true, unhealthy: 3, total: 6})
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped'])
  })

  it('a standby judges no breaker: a pool seen after leadership was lost does not close the one left tripped', async () => {
    const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy('2')})
    await tripBreaker(fx)
    fx.engine.setLeader(false)
    fx.putPool('f', {ready: 'True'})
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped'])
  })

  it('the recovery restarts the pools it held, not a pool marked before the trip', async () => {
    const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy('2'), breakerWindowMs: 10 * GRACE, breakerHoldMs: 1_000})
    for (const name of ['m', 'a', 'b', 'c', 'd']) fx.putPool(name, {ready: 'True'})
    // m falls silent at 50 s and is marked; a, b and c at 110 s, and trip the breaker.
    await renewUntil(fx, ['a', 'b', 'c', 'd'], 60_000)
    await renewUntil(fx, ['d'], 110_000)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['m'])
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped'])
    // b and c come back: m and a went silent in the window (2 of 5), a alone is stale: recovered.
    fx.renew('b', 'back')
    fx.renew('c', 'back')
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped', 'recovered'])
    expect(fx.engine.verdict('m')).to.deep.include({state: 'marked'})
    expect(fx.engine.verdict('a'), 'restarted: a fresh grace period').to.equal(undefined)
  })

  it('the pools a recovery restarts leave the window: the next two silent pools do not trip it again', async () => {
    const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy('2'), breakerWindowMs: 10 * GRACE, breakerHoldMs: 1_000})
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) fx.putPool(name, {ready: 'True'})
    // a, b and c never renew: silent at 50 s, the breaker trips. d and e renew until 50 s, f always.
    await renewUntil(fx, ['d', 'e', 'f'], GRACE)
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped'])
    await fx.advance(5_000)
    // b and c come back at 55 s: recovered, a restarted (silent again at 105 s, after this test).
    for (const name of ['b', 'c', 'f']) fx.renew(name, 'back')
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped', 'recovered'])
    // d and e fall silent at 100 s: two in the window, within the limit; judged at 101 s.
    await renewUntil(fx, ['b', 'c', 'f'], 100_000)
    await fx.advance(2_000)
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped', 'recovered'])
    expect(fx.marks.map((m) => m.name).sort()).to.deep.equal(['d', 'e'])
  })

  it('the fleet’s recovery restarts the pools it held whatever their zone: the one still dead is marked a grace period later', async () => {
    // Each pool its own zone: no zone ever holds more than one silent pool.
    const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy('2'), zoneOf: (name) => `zone-${name}`})
    await tripBreaker(fx)
    fx.renew('b', 'back')
    fx.renew('c', 'back')
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped', 'recovered'])
    await renewUntil(fx, ['b', 'c', 'd', 'e'], fx.clock.monotonic() + GRACE + 10_000)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['a'])
  })

  describe('zones', () => {
    const ZONES = ['a', 'b', 'c']
    const names = ZONES.flatMap((zone) => [0, 1, 2, 3].map((i) => `${zone}-${i}`))

    it('a zone’s recovery restarts its own pools only; a zone held sends no confirming read and says so in the log', async () => {
      const changes: ZoneTransition[] = []
      const confirmed: string[] = []
      // 75 %: a zone of 4 trips with 4 silent; the fleet of 12 holds with 8.
      const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy('75%'), zoneOf: (name) => name.split('-')[0]})
      fx.engine['options'].observer.zoneBreaker = (change: ZoneTransition) => changes.push(change)
      fx.engine['options'].observer.confirmRead = (name: string) => confirmed.push(name)
      for (const name of names) {
        fx.putPool(name, {ready: 'True'})
        fx.renew(name, 'r0')
      }
      const live = names.filter((n) => n.startsWith('c-'))
      await renewUntil(fx, live, 2 * GRACE)
      expect(changes.map((c) => `${c.zone} ${c.transition}`).sort()).to.deep.equal(['a tripped', 'b tripped'])
      expect(fx.breakers, 'the fleet').to.deep.equal([])
      expect(confirmed, 'no read for a pool its zone holds').to.deep.equal([])
      expect(fx.logger.at('warn').map((e) => e.msg)).to.include('too many pools stale at once in zone a; marking none there until fewer are')
      // Zone a comes back but for a-0.
      for (const name of ['a-1', 'a-2', 'a-3']) fx.renew(name, 'back')
      expect(changes.map((c) => `${c.zone} ${c.transition}`)).to.include('a recovered')
      expect(fx.engine.verdict('a-0'), 'restarted').to.equal(undefined)
      expect(fx.engine.verdict('b-0')).to.deep.include({state: 'held', hold: 'breaker'})
    })
  })
})
