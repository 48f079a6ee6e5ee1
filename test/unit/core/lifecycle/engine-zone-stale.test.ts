/**
 * What keeps a zone held past the breaker's window, and a dry run's view of another controller's mark
 * once the pool has shown life under it.
 */
import {expect} from 'chai'
import {parseMaxUnhealthy} from '../../../../src/core/lifecycle/mass-silence/max-unhealthy.ts'
import type {ZoneTransition} from '../../../../src/core/lifecycle/mass-silence/zone-breakers.ts'
import {GRACE, LifecycleFixture, renewUntil} from '../../../support/lifecycle-fixture.ts'

describe('controller lifecycle: a zone held past the window', () => {
  it('its stale, unmarked pools keep it held after their silences left the window; a pool it marked before does not', async () => {
    const changes: ZoneTransition[] = []
    // 25 %: zone a (4 pools) trips with 2 silent; zone b (12 pools) keeps the fleet (16) under it with 3.
    const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy('25%'), zoneOf: (name) => name.split('-')[0], breakerWindowMs: 10_000, breakerHoldMs: 1_000})
    fx.engine['options'].observer.zoneBreaker = (change: ZoneTransition) => changes.push(change)
    const a = ['a-0', 'a-1', 'a-2', 'a-3']
    const b = Array.from({length: 12}, (_, i) => `b-${i}`)
    for (const name of [...a, ...b]) fx.putPool(name, {ready: 'True'})
    // a-3 never renews: silent at 50 s alone (1 of 4), marked. a-0..a-2 renew until 20 s: silent at 70 s, zone a held.
    await renewUntil(fx, ['a-0', 'a-1', 'a-2', ...b], 20_000)
    await renewUntil(fx, b, 70_000)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['a-3'])
    expect(changes.map((c) => `${c.zone} ${c.transition}`)).to.deep.equal(['a tripped'])
    // At 85 s the silences of 70 s have left the window: a-0..a-2, stale and unmarked, keep zone a held.
    await renewUntil(fx, b, 85_000)
    fx.putPool('b-new', {ready: 'True'})
    expect(changes.map((c) => `${c.zone} ${c.transition}`)).to.deep.equal(['a tripped'])
    // a-1 and a-2 come back: a-0 alone is stale (1 of 4); a-3, marked, does not count.
    fx.renew('a-1', 'back')
    fx.renew('a-2', 'back')
    expect(changes.map((c) => `${c.zone} ${c.transition}`)).to.deep.equal(['a tripped', 'a recovered'])
    expect(fx.breakers, 'the fleet').to.deep.equal([])
  })
})

describe('controller lifecycle: the dry run and another controller’s mark', () => {
  it('once the pool shows life under another controller’s mark, the mark counts as there: silent again, it is not would-marked', async () => {
    const fx = new LifecycleFixture({dryRun: true})
    fx.putPool('p', {ready: 'True'})
    fx.renew('p', 'r0')
    await fx.advance(10_000)
    // The real controller marks it (seen after True: another's mark); then p renews its Lease, its Ready left Unknown.
    fx.putPool('p', {ready: 'Unknown', reason: 'MachinePoolStatusUnknown'})
    await fx.advance(10_000)
    fx.renew('p', 'r1')
    await fx.advance(GRACE + 5_000)
    expect(fx.wouldMarks).to.deep.equal([])
  })
})
