/**
 * The per-zone breaker (--max-unhealthy with zoned pools): a zone with too many silent pools is held,
 * the others are judged as usual, and the fleet-wide breaker is kept (Kubernetes' per-zone
 * unhealthy-zone-threshold).
 */
import {expect} from 'chai'
import {parseMaxUnhealthy} from '../../../../../src/core/lifecycle/mass-silence/max-unhealthy.ts'
import {ZoneBreakers, type ZoneTransition} from '../../../../../src/core/lifecycle/mass-silence/zone-breakers.ts'
import {GRACE, LifecycleFixture} from '../../../../support/lifecycle-fixture.ts'

const ZONES = ['a', 'b', 'c']
const names = ZONES.flatMap((zone) => [0, 1, 2, 3].map((i) => `${zone}-${i}`))

function zonedFleet(limit = '50%') {
  const changes: ZoneTransition[] = []
  const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy(limit), zoneOf: (name) => name.split('-')[0]})
  fx.engine['options'].observer.zoneBreaker = (change: ZoneTransition) => changes.push(change)
  for (const name of names) {
    fx.putPool(name, {ready: 'True'})
    fx.renew(name, 'r0')
  }
  /** Renews every pool but the dead, every 5 s, for ms. */
  const live = async (dead: readonly string[], ms: number) => {
    for (let t = 0; t < ms; t += 5_000) {
      await fx.advance(5_000)
      for (const name of names) if (!dead.includes(name)) fx.renew(name, `r${fx.clock.monotonic()}`)
    }
  }
  return {fx, changes, live}
}

describe('controller lifecycle: the per-zone breaker', () => {
  it('zone a cut off: zone a held (its breaker trips, naming it), a dead pool in zone b is marked, the fleet-wide breaker stays closed', async () => {
    const {fx, changes, live} = zonedFleet()
    const dead = ['a-0', 'a-1', 'a-2', 'a-3', 'b-0']
    await live(dead, 2 * GRACE)
    expect(changes).to.deep.equal([{zone: 'a', transition: 'tripped', unhealthy: 4, total: 4}])
    expect(fx.breakers, 'the fleet-wide breaker').to.deep.equal([])
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['b-0'])
    expect(fx.engine.verdict('a-0')).to.deep.include({state: 'held', hold: 'breaker'})
    expect(fx.engine.overdueStats().pools).to.equal(4)
  })

  it('zone a back but for one pool: its breaker recovers, the held pools start a fresh grace period, the dead one is marked a grace period later', async () => {
    const {fx, changes, live} = zonedFleet()
    await live(['a-0', 'a-1', 'a-2', 'a-3'], 2 * GRACE)
    await live(['a-0'], 10_000)
    expect(changes.map((c) => `${c.zone} ${c.transition}`)).to.deep.equal(['a tripped', 'a recovered'])
    expect(fx.marks).to.deep.equal([])
    await live(['a-0'], GRACE + GRACE / 5)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['a-0'])
  })

  it('the fleet-wide breaker is kept: two zones cut off trip it as before, holding every zone', async () => {
    const {fx, changes, live} = zonedFleet('40%')
    await live([...names.filter((n) => n.startsWith('a-') || n.startsWith('b-')), 'c-0'], 2 * GRACE)
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped'])
    expect(changes.map((c) => `${c.zone} ${c.transition}`).sort()).to.deep.equal(['a tripped', 'b tripped'])
    expect(fx.marks, 'c-0 held by the fleet-wide breaker').to.deep.equal([])
  })

  it('without zones (no zoneOf, or pools without a zone label) only the fleet-wide breaker judges', async () => {
    const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy('50%'), zoneOf: () => undefined})
    for (const name of names) fx.putPool(name, {ready: 'True'})
    for (let t = 0; t < 2 * GRACE; t += 5_000) {
      await fx.advance(5_000)
      for (const name of names) if (!name.startsWith('a-')) fx.renew(name, `r${t}`)
    }
    expect(fx.marks.map((m) => m.name).sort()).to.deep.equal(['a-0', 'a-1', 'a-2', 'a-3'])
  })

  it("counts the zones' sizes at most once per refresh (or when the pool count changes), not at every update", () => {
    let walks = 0
    const pools = Array.from({length: 1_000}, (_, i) => `z${i % 10}-${i}`)
    const all = {names: () => (walks++, pools), size: pools.length}
    const zones = new ZoneBreakers(parseMaxUnhealthy('50%'), (name) => name.split('-')[0], 10_000)
    const silent = pools.filter((n) => n.startsWith('z3-'))
    for (let t = 0; t < 100; t++) zones.update(silent.slice(0, 60), [], all, t * 10)
    expect(walks).to.equal(1)
    expect(zones.held()).to.deep.equal(['z3'])
    zones.update(silent, [], {...all, size: 999}, 1_000)
    zones.update(silent, [], all, 20_000)
    expect(walks).to.equal(3)
  })
})
