/** The per-zone breakers as a class: no limit, the zones' sizes counted at most once per refresh, a zone whose pools are gone forgotten, clear(). */
import {expect} from 'chai'
import {ZoneBreakers} from '../../../../../src/core/lifecycle/mass-silence/zone-breakers.ts'

/** Pools and their zones as the test sets them (a pool's zone label can change). */
function fleet(zones: Record<string, string>) {
  const zoneOf = (name: string) => zones[name]
  const all = () => ({names: () => Object.keys(zones), size: Object.keys(zones).length})
  return {zones, zoneOf, all}
}

describe('ZoneBreakers: counting', () => {
  it('without a limit nothing is counted: no transition, no zone held, no zone’s state', () => {
    const {zoneOf, all} = fleet({p1: 'a', p2: 'a'})
    const zones = new ZoneBreakers(undefined, zoneOf)
    expect(zones.update(['p1', 'p2'], ['p1', 'p2'], all(), 0)).to.deep.equal([])
    expect(zones.state('a')).to.equal(undefined)
    expect(zones.holds('p1')).to.equal(false)
  })

  it('the zones’ sizes are counted again once refreshMs has passed since the last count, not before (the pool count unchanged)', () => {
    const {zones: labels, zoneOf, all} = fleet({p1: 'a', p2: 'a', p3: 'b'})
    const zones = new ZoneBreakers({kind: 'count', count: 5}, zoneOf, 1_000)
    zones.update([], [], all(), 500)
    expect(zones.state('a')?.total).to.equal(2)
    labels.p2 = 'b'
    zones.update([], [], all(), 1_499)
    expect(zones.state('a')?.total, 'counted at 500 ms: still fresh').to.equal(2)
    zones.update([], [], all(), 1_500)
    expect(zones.state('a')?.total).to.equal(1)
    expect(zones.state('b')?.total).to.equal(2)
  })

  it('a silent pool in a zone the last count did not see is counted in that zone, whose breaker, held, is kept though it has no pool counted', () => {
    const {zones: labels, zoneOf, all} = fleet({p1: 'a', p2: 'b'})
    const zones = new ZoneBreakers({kind: 'count', count: 0}, zoneOf, 60_000)
    expect(zones.update([], [], all(), 0)).to.deep.equal([])
    labels.p1 = 'c'
    expect(zones.update(['p1'], [], all(), 10)).to.deep.equal([{zone: 'c', transition: 'tripped', unhealthy: 1, total: 0}])
    expect(zones.holds('p1')).to.equal(true)
    expect(zones.held()).to.deep.equal(['c'])
    expect(zones.update(['p1'], ['p1'], all(), 20)).to.deep.equal([])
    expect(zones.state('c')).to.deep.equal({tripped: true, unhealthy: 1, total: 0})
  })

  it('a zone whose pools are all gone is forgotten once its breaker is closed; a zone with pools keeps its breaker', () => {
    const {zones: labels, zoneOf, all} = fleet({p1: 'a', p2: 'b'})
    const zones = new ZoneBreakers({kind: 'count', count: 5}, zoneOf)
    zones.update([], [], all(), 0)
    expect(zones.state('a')).to.deep.equal({tripped: false, unhealthy: 0, total: 1})
    delete labels.p1
    expect(zones.update([], [], all(), 0)).to.deep.equal([])
    expect(zones.state('a')).to.equal(undefined)
    expect(zones.state('b')).to.deep.equal({tripped: false, unhealthy: 0, total: 1})
  })

  it('a pool of a zone never counted is not held', () => {
    const {zoneOf, all} = fleet({p1: 'a'})
    const zones = new ZoneBreakers({kind: 'count', count: 0}, zoneOf)
    zones.update([], [], all(), 0)
    expect(zones.holds('p1')).to.equal(false)
    expect(zones.holds('elsewhere')).to.equal(false)
  })

  it('clear() forgets every zone, held ones too', () => {
    const {zoneOf, all} = fleet({p1: 'a', p2: 'b'})
    const zones = new ZoneBreakers({kind: 'count', count: 0}, zoneOf)
    zones.update(['p1'], ['p1'], all(), 0)
    expect(zones.held()).to.deep.equal(['a'])
    zones.clear()
    expect(zones.held()).to.deep.equal([])
    expect(zones.holds('p1')).to.equal(false)
    expect(zones.state('a')).to.equal(undefined)
  })
})
