/** Correlated silence, named: pools falling silent within one window, grouped by zone label, holder host and kind. */
import {expect} from 'chai'
import {groupKeys, groupPhrase, holderHost, SilenceGroups, silenceGroupMessage, type GroupKey, type SilenceGroupReport} from '../../../../../src/core/lifecycle/mass-silence/silence-groups.ts'
import {FakeClock} from '../../../../support/fake-clock.ts'
import {GRACE, LifecycleFixture} from '../../../../support/lifecycle-fixture.ts'

const ZONE = 'topology.ironcore.dev/zone'

/** 3 zones of 5 pools each, on the fixture's engine, grouped as the controller wires it. */
function fleet() {
  const fx = new LifecycleFixture()
  const labels = new Map<string, Record<string, string>>()
  for (const zone of ['a', 'b', 'c']) for (let i = 0; i < 5; i++) labels.set(`${zone}-${i}`, {[ZONE]: zone})
  const keysOf = (name: string) => groupKeys(name, labels.get(name), `${name}_uuid`)
  const reports: SilenceGroupReport[] = []
  const groups = new SilenceGroups({
    kind: 'machine',
    clock: fx.clock,
    windowMs: (GRACE * 4) / 5,
    settleMs: GRACE / 5,
    keysOf,
    census: (key: GroupKey) => {
      const members = [...labels.keys()].filter((n) => keysOf(n).some((k) => k.by === key.by && k.value === key.value))
      return {total: members.length, silent: members.filter((n) => fx.engine.verdict(n) !== undefined).length}
    },
    report: (r) => reports.push(r),
  })
  fx.engine['options'].observer.fellSilent = (name: string, at: number) => groups.fellSilent(name, at)
  for (const name of labels.keys()) {
    fx.putPool(name, {ready: 'True'})
    fx.renew(name, 'r0')
  }
  return {fx, labels, reports, groups}
}

describe('correlated silence', () => {
  it('one zone cut off: one report naming the zone and its counts, and one for the kind; none for the zones that renew', async () => {
    const {fx, reports, groups} = fleet()
    for (let t = 1; t <= 12; t++) {
      await fx.advance(5_000)
      // Every pool renews but zone a's, each at its own phase.
      for (const zone of ['b', 'c']) for (let i = 0; i < 5; i++) fx.renew(`${zone}-${i}`, `r${t}`)
    }
    expect(reports.map((r) => `${r.by}/${r.value}`)).to.deep.equal(['zone/a', 'kind/'])
    expect(reports[0]).to.deep.include({kind: 'machine', by: 'zone', value: 'a', silent: 5, withinMs: 0, total: 5, renewing: 0})
    expect(reports[1]).to.deep.include({kind: 'machine', by: 'kind', value: '', silent: 5, total: 15, renewing: 10})
    expect(silenceGroupMessage('machinepools', reports[0]!)).to.equal('5 machinepools in zone a went silent within 0s; 0 of 5 in zone a still renew')
    expect(silenceGroupMessage('machinepools', reports[1]!)).to.equal('5 machinepools went silent within 0s; 10 of 15 machinepools still renew')
    expect(groups.largest()).to.deep.include({by: 'zone', value: 'a', silent: 5})
    expect(fx.marks).to.have.length(5)
  })

  it('pools of different zones falling silent are no zone group (the kind still is); a spread wider than the window is none', async () => {
    const {fx, reports} = fleet()
    for (let t = 1; t <= 12; t++) {
      await fx.advance(5_000)
      for (const name of ['a-0', 'a-1', 'a-2', 'a-3', 'a-4', 'b-0', 'b-1', 'b-2', 'b-3', 'b-4', 'c-0', 'c-1', 'c-2', 'c-3', 'c-4']) {
        if (!['a-0', 'b-0', 'c-0'].includes(name)) fx.renew(name, `r${t}`)
      }
    }
    expect(reports.map((r) => `${r.by}/${r.value}`)).to.deep.equal(['kind/'])

    const spread = fleet()
    const dead = ['a-0', 'a-1', 'a-2']
    for (let t = 1; t <= 40; t++) {
      await spread.fx.advance(5_000)
      // a-0 stops first, a-1 a window later, a-2 a window after that.
      for (const name of spread.labels.keys()) if (!dead.slice(0, Math.floor(t / 9) + 1).includes(name)) spread.fx.renew(name, `r${t}`)
    }
    expect(spread.reports).to.deep.equal([])
  })

  it('reports each spell once, settleMs after it reached minPools, counting those that fell silent meanwhile; a new spell after a quiet window is reported again', async () => {
    const clock = new FakeClock()
    const reports: SilenceGroupReport[] = []
    const groups = new SilenceGroups({kind: 'machine', clock, windowMs: 1_000, settleMs: 500, keysOf: () => [{by: 'zone', value: 'a'}], census: () => ({total: 9, silent: 4}), report: (r) => reports.push(r)})
    for (const [name, at] of [['p1', 0], ['p2', 100], ['p3', 200]] as const) groups.fellSilent(name, at)
    await clock.advance(499)
    groups.fellSilent('p4', 300)
    expect(reports).to.deep.equal([])
    await clock.advance(1)
    expect(reports).to.deep.equal([{kind: 'machine', by: 'zone', value: 'a', silent: 4, withinMs: 300, total: 9, renewing: 5, examples: ['p1', 'p2', 'p3', 'p4']}])
    groups.fellSilent('p5', 400)
    await clock.advance(1_000)
    expect(reports).to.have.length(1)
    for (const [name, at] of [['p6', 5_000], ['p7', 5_100], ['p8', 5_200]] as const) groups.fellSilent(name, at)
    await clock.advance(500)
    expect(reports).to.have.length(2)
  })

  it('a pool\'s groups: the first zone label it carries, the host its Lease holder names (not its own <pool>_<uuid>), the kind', () => {
    expect(groupKeys('p', {'topology.kubernetes.io/zone': 'k', [ZONE]: 'i'}, 'p_123')).to.deep.equal([{by: 'zone', value: 'i'}, {by: 'kind', value: ''}])
    expect(groupKeys('p', {'topology.kubernetes.io/zone': 'k'}, 'node-7_123')).to.deep.equal([{by: 'zone', value: 'k'}, {by: 'host', value: 'node-7'}, {by: 'kind', value: ''}])
    expect(groupKeys('p', {rack: 'r1'}, undefined, ['rack'])).to.deep.equal([{by: 'zone', value: 'r1'}, {by: 'kind', value: ''}])
    expect([holderHost('p', 'host-1/p'), holderHost('p', 'p_1'), holderHost('p', 'nouuid'), holderHost('p', '')]).to.deep.equal(['host-1', undefined, undefined, undefined])
  })
})

describe('correlated silence: the window, the spells and the names', () => {
  function groups(keysOf: (name: string) => GroupKey[] = () => [{by: 'zone', value: 'a'}]) {
    const clock = new FakeClock()
    const reports: SilenceGroupReport[] = []
    const g = new SilenceGroups({kind: 'machine', clock, windowMs: 1_000, settleMs: 500, keysOf, census: () => ({total: 20, silent: 4}), report: (r) => reports.push(r)})
    return {clock, reports, g}
  }

  it('a pool falling silent exactly a window after the last is in the same spell, and the first is still within it', async () => {
    const {clock, reports, g} = groups()
    g.fellSilent('p1', 0)
    g.fellSilent('p2', 0)
    g.fellSilent('p3', 1_000)
    await clock.advance(500)
    expect(reports.map((r) => r.silent)).to.deep.equal([3])
  })

  it('a pool falling silent again moves to the end of its spell; pools older than the window drop out', async () => {
    const {clock, reports, g} = groups()
    g.fellSilent('p1', 0)
    g.fellSilent('p2', 100)
    g.fellSilent('p1', 900)
    g.fellSilent('p3', 1_850)
    g.fellSilent('p4', 1_860)
    await clock.advance(500)
    expect(reports.map((r) => [r.silent, r.examples])).to.deep.equal([[3, ['p1', 'p3', 'p4']]])
  })

  it('clear() forgets every spell and cancels the reports waiting to settle', async () => {
    const {clock, reports, g} = groups()
    for (const p of ['p1', 'p2', 'p3']) g.fellSilent(p, 0)
    expect(g.largest()).to.deep.equal({by: 'zone', value: 'a', silent: 3})
    g.clear()
    expect(clock.pending).to.equal(0)
    await clock.advance(1_000)
    expect(reports).to.deep.equal([])
    expect(g.largest()).to.equal(undefined)
  })

  it('a report names ten pools at most', async () => {
    const {clock, reports, g} = groups()
    for (let i = 0; i < 12; i++) g.fellSilent(`p${i}`, i)
    await clock.advance(500)
    expect(reports[0]!.silent).to.equal(12)
    expect(reports[0]!.examples).to.deep.equal(Array.from({length: 10}, (_, i) => `p${i}`))
  })

  it('largest(): the group of at least minPools with the most silent pools, never the kind as a whole; a value may hold a slash', () => {
    const keys = (zone: string, host: boolean) => (name: string): GroupKey[] => [{by: 'zone', value: zone}, ...(host && ['p1', 'p2', 'p3'].includes(name) ? [{by: 'host' as const, value: 'h'}] : []), {by: 'kind', value: ''}]
    const zoneBigger = groups(keys('eu/1', true))
    for (const p of ['p1', 'p2', 'p3', 'p4', 'p5']) zoneBigger.g.fellSilent(p, 0)
    expect(zoneBigger.g.largest()).to.deep.equal({by: 'zone', value: 'eu/1', silent: 5})
    const onlyHost = groups((name) => [...(name === 'p9' ? [{by: 'zone' as const, value: 'z'}] : []), {by: 'host', value: 'h'}])
    for (const p of ['p9', 'p1', 'p2', 'p3']) onlyHost.g.fellSilent(p, 0)
    expect(onlyHost.g.largest(), 'the zone has one pool: below minPools').to.deep.equal({by: 'host', value: 'h', silent: 4})
    // The bigger group second: zone a (3 pools) first, then host h (5).
    const bigHostLater = groups((name) => [name.startsWith('p') ? {by: 'zone', value: 'a'} : {by: 'host', value: 'h'}])
    for (const p of ['p1', 'p2', 'p3', 'q1', 'q2', 'q3', 'q4', 'q5']) bigHostLater.g.fellSilent(p, 0)
    expect(bigHostLater.g.largest()).to.deep.equal({by: 'host', value: 'h', silent: 5})
    const exactly = groups()
    for (const p of ['p1', 'p2', 'p3']) exactly.g.fellSilent(p, 0)
    expect(exactly.g.largest(), 'exactly minPools').to.deep.equal({by: 'zone', value: 'a', silent: 3})
    const kindOnly = groups(() => [{by: 'kind', value: ''}])
    for (const p of ['p1', 'p2', 'p3', 'p4']) kindOnly.g.fellSilent(p, 0)
    expect(kindOnly.g.largest()).to.equal(undefined)
    const few = groups()
    for (const p of ['p1', 'p2']) few.g.fellSilent(p, 0)
    expect(few.g.largest()).to.equal(undefined)
  })

  it("a holder starting with its separator names no host; the groups' phrases; an empty zone label is no zone", () => {
    expect([holderHost('p', '/x'), holderHost('p', '_abc'), holderHost('p', 'h_1')]).to.deep.equal([undefined, undefined, 'h'])
    expect([groupPhrase('zone', 'a'), groupPhrase('host', 'h'), groupPhrase('kind', '')]).to.deep.equal(['in zone a', 'on host h', 'in all'])
    expect(groupKeys('p', {[ZONE]: '', 'topology.kubernetes.io/zone': 'k'}, undefined)).to.deep.equal([{by: 'zone', value: 'k'}, {by: 'kind', value: ''}])
    expect(silenceGroupMessage('machinepools', {kind: 'machine', by: 'host', value: 'h', silent: 3, withinMs: 1_500, total: 4, renewing: 1, examples: []})).to.equal(
      '3 machinepools on host h went silent within 1.5s; 1 of 4 on host h still renew',
    )
  })
})
