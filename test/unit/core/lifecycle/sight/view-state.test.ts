/** One kind's view: whole only when every source vouches for it; each spell logged and timed once. */
import {expect} from 'chai'
import {ViewState, type BlindSpell} from '../../../../../src/core/lifecycle/sight/view-state.ts'
import type {BlindReason} from '../../../../../src/core/lifecycle/sight/sight.ts'
import {FakeClock} from '../../../../support/fake-clock.ts'
import {FakeLogger} from '../../../../support/fake-logger.ts'

function setup() {
  const clock = new FakeClock()
  const logger = new FakeLogger()
  const changes: [boolean, BlindReason | undefined][] = []
  const blind: [BlindReason, number][] = []
  const spells: BlindSpell[] = []
  const view = new ViewState({
    clock,
    logger,
    sources: ['sight', 'pools', 'leases'],
    fields: {kind: 'machine'},
    observer: {changed: (w, r) => changes.push([w, r]), blindFor: (r, ms) => blind.push([r, ms]), spellEnded: (s) => spells.push(s)},
  })
  return {clock, logger, view, changes, blind, spells}
}

describe('ViewState', () => {
  it('starts not synced and turns whole only when every source has cleared', async () => {
    const {clock, view, spells} = setup()
    expect(view.whole).to.be.false
    expect(view.reason).to.equal('not-synced')
    view.set('sight', undefined)
    view.set('pools', undefined)
    expect(view.whole).to.be.false
    await clock.advance(700)
    view.set('leases', undefined)
    expect(view.whole).to.be.true
    expect(spells).to.deep.equal([{reason: 'not-synced', reasons: ['not-synced'], durationMs: 700, lost: true}])
  })

  it('reports the most telling reason, each spell once, and the time spent per reason', async () => {
    const {clock, logger, view, changes, blind, spells} = setup()
    for (const s of ['sight', 'pools', 'leases']) view.set(s, undefined)
    view.set('leases', 'watch-gap', 'reconnecting')
    await clock.advance(1000)
    view.set('sight', 'paused')
    await clock.advance(2000)
    view.set('sight', undefined)
    await clock.advance(500)
    view.set('leases', undefined)
    expect(changes).to.deep.equal([[true, undefined], [false, 'watch-gap'], [true, undefined]])
    expect(blind).to.deep.equal([['not-synced', 0], ['watch-gap', 1000], ['paused', 2000], ['watch-gap', 500]])
    expect(spells.at(-1)).to.deep.equal({reason: 'watch-gap', reasons: ['watch-gap', 'paused', 'watch-gap'], durationMs: 3500, lost: true})
    expect(logger.at('warn').map((e) => [e.msg, e.obj.reason, e.obj.detail])).to.deep.equal([
      ['view not whole (watch-gap): marking nothing until it is', 'watch-gap', 'reconnecting'],
    ])
    expect(logger.at('info').filter((e) => e.msg.startsWith('view whole again')).map((e) => e.obj.blindMs)).to.deep.equal([0, 3500])
  })

  it('a spell a source reports late (a pause, seen once over) is counted from when it began', async () => {
    const {clock, view, blind, spells} = setup()
    for (const s of ['sight', 'pools', 'leases']) view.set(s, undefined)
    await clock.advance(10_000)
    view.set('sight', 'paused', 'the event loop ran 6000 ms late', 6000)
    await clock.advance(400)
    view.set('sight', undefined)
    expect(blind.at(-1)).to.deep.equal(['paused', 6400])
    expect(spells.at(-1)).to.deep.include({reason: 'paused', durationMs: 6400})
  })

  it('a spell loses evidence only when this process paused or a source missed events; the change says so', async () => {
    const clock = new FakeClock()
    const hows: [boolean, {sinceMs: number; lost: boolean}][] = []
    const view = new ViewState({clock, logger: new FakeLogger(), sources: ['sight', 'pools'], observer: {changed: (w, _r, how) => hows.push([w, how])}})
    view.set('sight', undefined)
    view.set('pools', undefined)
    view.set('sight', 'api-unanswered', '3 probes failed in a row', 10_000)
    await clock.advance(5000)
    view.set('sight', undefined)
    view.set('pools', 'watch-gap', 'relisting (gone)')
    view.eventsMissed()
    view.set('pools', undefined)
    expect(hows).to.deep.equal([
      [true, {sinceMs: 0, lost: true}],
      [false, {sinceMs: 10_000, lost: false}],
      [true, {sinceMs: 0, lost: false}],
      [false, {sinceMs: 0, lost: false}],
      [true, {sinceMs: 0, lost: true}],
    ])
  })

  it('a source repeating its state changes nothing', () => {
    const {view, changes} = setup()
    for (const s of ['sight', 'pools', 'leases']) view.set(s, undefined)
    view.set('pools', undefined)
    view.set('sight', 'api-unanswered', 'a')
    view.set('sight', 'api-unanswered', 'b')
    expect(changes).to.deep.equal([[true, undefined], [false, 'api-unanswered']])
  })

  it('a pause of this process within a spell loses its evidence: whole again, every grace period starts now; the change is said at info', async () => {
    const {clock, view, logger, spells} = setup()
    for (const s of ['sight', 'pools', 'leases']) view.set(s, undefined)
    view.set('pools', 'watch-gap', 'relisting')
    await clock.advance(1_000)
    view.set('sight', 'paused', 'the event loop stood still 12 s', 5_000)
    const still = logger.at('info').find((e) => e.msg === 'view still not whole, now paused')
    expect(still?.obj).to.include({kind: 'machine', reason: 'paused', was: 'watch-gap', source: 'sight', detail: 'the event loop stood still 12 s'})
    view.set('sight', undefined)
    view.set('pools', undefined)
    expect(spells.slice(1).map((s) => `${s.reasons.join('>')} lost=${s.lost}`)).to.deep.equal(['watch-gap>paused>watch-gap lost=true'])
    expect(logger.at('info').at(-1)?.msg).to.equal('view whole again: every grace period starts now')
    expect(logger.at('info').at(-1)?.obj).to.include({kind: 'machine', reason: 'watch-gap', lost: true})
    expect(logger.at('info').at(-1)?.obj.reasons).to.deep.equal(['watch-gap', 'paused', 'watch-gap'])
  })

  it('a spell without a pause keeps the silence: said so when whole again; a reason of equal rank does not replace the first', () => {
    const {view, logger, changes} = setup()
    for (const s of ['sight', 'pools', 'leases']) view.set(s, undefined)
    view.set('pools', 'watch-gap', 'relisting')
    view.set('leases', 'watch-gap', 'relisting too')
    expect(changes.at(-1)).to.deep.equal([false, 'watch-gap'])
    view.set('sight', 'api-unanswered', 'probes failing')
    expect(view.reason).to.equal('api-unanswered')
    view.set('sight', undefined)
    const warn = logger.at('warn')[0]
    expect(warn?.obj).to.include({source: 'pools', detail: 'relisting'})
    view.set('pools', undefined)
    view.set('leases', undefined)
    expect(logger.at('info').at(-1)?.msg).to.equal('view whole again: silence counts again, blind time not counted')
  })

  it('the most telling reason wins whichever source said it first; of equal ones, the first said', () => {
    const {view, logger} = setup()
    for (const s of ['sight', 'pools', 'leases']) view.set(s, undefined)
    view.set('sight', 'api-unanswered', 'probes failing')
    view.set('pools', 'watch-gap', 'relisting')
    expect(view.reason).to.equal('api-unanswered')
    view.set('leases', 'watch-gap', 'relisting too')
    view.set('sight', undefined)
    expect(view.reason).to.equal('watch-gap')
    expect(logger.at('info').at(-1)?.obj).to.include({reason: 'watch-gap', detail: 'relisting'})
  })
})
