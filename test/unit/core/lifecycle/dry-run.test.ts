/**
 * The dry run (--dry-run): the same engine, judging exactly as it would, with the Unknown write
 * replaced by a would-mark. Each case runs a real engine and a dry one through the same timeline.
 */
import {expect} from 'chai'
import {VERDICT_ANNOTATION, WOULD_MARK_REASON, type VerdictRecord} from '../../../../src/core/lifecycle/verdict.ts'
import {parseMaxUnhealthy} from '../../../../src/core/lifecycle/mass-silence/max-unhealthy.ts'
import {GRACE, LifecycleFixture, type FixtureOptions} from '../../../support/lifecycle-fixture.ts'

const recordOf = (annotations: Record<string, string> | undefined): VerdictRecord => JSON.parse(annotations?.[VERDICT_ANNOTATION] ?? 'null') as VerdictRecord

/** A real engine and a dry one, fed the same pools, renewals and time. */
function pair(options: FixtureOptions = {}) {
  const real = new LifecycleFixture(options)
  const dry = new LifecycleFixture({...options, dryRun: true})
  dry.store.script.forbid('writeConditions')
  return {
    real,
    dry,
    putPool: (name: string, ready: 'True' | 'False' = 'True') => [real, dry].forEach((fx) => fx.putPool(name, {ready})),
    renew: (name: string, at: string) => [real, dry].forEach((fx) => fx.renew(name, at)),
    advance: async (ms: number) => {
      await real.advance(ms)
      await dry.advance(ms)
    },
  }
}

describe('controller lifecycle: dry run', () => {
  it('would-marks the pools the real engine marks, at the same instants, and writes nothing', async () => {
    const p = pair()
    for (const name of ['a', 'b', 'c']) p.putPool(name)
    await p.advance(10_000)
    p.renew('b', 'r1')
    await p.advance(GRACE - 10_000)
    expect(p.real.marks.map((m) => m.name)).to.deep.equal(['a', 'c'])
    expect(p.dry.wouldMarks).to.deep.equal(p.real.marks)
    expect(p.dry.marks, 'no mark reported by the dry run').to.deep.equal([])
    expect(p.dry.writes, 'pool writes by the dry run').to.equal(0)
    await p.advance(10_000)
    expect(p.dry.wouldMarks.map((m) => m.name)).to.deep.equal(['a', 'c', 'b'])
    expect(p.dry.wouldMarks).to.deep.equal(p.real.marks)
    expect(p.dry.ready('a')?.status, 'the pool as the API holds it').to.equal('True')
  })

  it('records each would-mark once, as a WouldMarkUnknown Event carrying the verdict record, and is not overdue after it', async () => {
    const p = pair()
    p.putPool('a')
    await p.advance(GRACE)
    await p.advance(5 * GRACE)
    expect(p.dry.events.events.map((e) => e.reason)).to.deep.equal([WOULD_MARK_REASON])
    const event = p.dry.events.events[0]!
    expect(event).to.include({kind: 'MachinePool', name: 'a', uid: 'uid-a', type: 'Normal'})
    expect(recordOf(event.annotations)).to.deep.include({pool: 'a', dryRun: true, state: 'marked', silenceMs: GRACE, blindExcludedMs: 0, stateSince: '2026-01-01T00:00:50.000Z'})
    expect(p.dry.engine.overdueStats()).to.deep.equal({pools: 0, oldestMs: 0})
    expect(p.dry.engine.verdict('a')?.state).to.equal('marked')
    expect(p.dry.logger.at('info').map((e) => e.msg)).to.deep.equal(['dry run: pool would be marked Ready=Unknown'])
  })

  it('a would-marked pool that progresses gets a fresh grace period, and is would-marked again when it falls silent', async () => {
    const p = pair()
    p.putPool('a')
    await p.advance(GRACE)
    p.renew('a', 'r1')
    expect(p.dry.engine.verdict('a')).to.equal(undefined)
    await p.advance(GRACE - 1)
    expect(p.dry.wouldMarks).to.have.length(1)
    await p.advance(1)
    expect(p.dry.wouldMarks.map((m) => m.name)).to.deep.equal(['a', 'a'])
  })

  it("another controller's mark made while it watched does not stop its would-mark; a pool Unknown at first sight is not news, as for the real engine", async () => {
    const dry = new LifecycleFixture({dryRun: true})
    dry.putPool('marked-by-other', {ready: 'True'})
    dry.putPool('long-dead', {ready: 'Unknown', reason: 'MachinePoolStatusUnknown'})
    await dry.advance(GRACE - 100)
    // The controller in charge, a moment quicker, marks the pool first.
    dry.putPool('marked-by-other', {ready: 'Unknown', reason: 'MachinePoolStatusUnknown'})
    await dry.advance(100)
    expect(dry.wouldMarks.map((m) => m.name)).to.deep.equal(['marked-by-other'])
    expect(dry.engine.overdueStats()).to.deep.equal({pools: 0, oldestMs: 0})
  })

  it('a pool Unknown at first sight stays respected when the watch delivers it again (another message, no progress): never would-marked', async () => {
    const dry = new LifecycleFixture({dryRun: true})
    dry.putPool('long-dead', {ready: 'Unknown', reason: 'MachinePoolStatusUnknown'})
    await dry.advance(GRACE / 2)
    dry.putPool('long-dead', {ready: 'Unknown', reason: 'MachinePoolStatusUnknown', message: 'still unknown'})
    await dry.advance(2 * GRACE)
    expect(dry.wouldMarks).to.deep.equal([])
  })

  it('a new pool under the name of one another controller marked is judged afresh: Unknown at first sight, it is respected', async () => {
    const dry = new LifecycleFixture({dryRun: true})
    dry.putPool('p', {ready: 'True'})
    await dry.advance(GRACE / 2)
    dry.putPool('p', {ready: 'Unknown', reason: 'MachinePoolStatusUnknown'}) // the controller in charge marks it
    await dry.advance(GRACE / 10)
    dry.putPool('p', {uid: 'uid-p-2', ready: 'Unknown', reason: 'MachinePoolStatusUnknown'})
    await dry.advance(2 * GRACE)
    expect(dry.wouldMarks).to.deep.equal([])
  })

  it('holds its hand exactly as the real engine: the breaker trips and recovers alike, and nothing is would-marked while open', async () => {
    const p = pair({maxUnhealthy: parseMaxUnhealthy('1')})
    for (const name of ['a', 'b', 'c']) p.putPool(name)
    await p.advance(2 * GRACE)
    expect(p.real.breakers.map((b) => b.transition)).to.deep.equal(['tripped'])
    expect(p.dry.breakers).to.deep.equal(p.real.breakers)
    expect(p.dry.wouldMarks).to.deep.equal([])
    expect(p.dry.engine.verdict('a')).to.deep.include({state: 'held', hold: 'breaker'})
    p.renew('a', 'r1')
    p.renew('b', 'r1')
    await p.advance(GRACE + GRACE / 5)
    expect(p.dry.breakers).to.deep.equal(p.real.breakers)
    expect(p.dry.wouldMarks).to.deep.equal(p.real.marks)
  })

  it('a blind spell holds the would-mark as it holds the mark, and is cut out of the silence', async () => {
    const p = pair()
    p.putPool('a')
    await p.advance(GRACE - 1_000)
    for (const fx of [p.real, p.dry]) fx.engine.setViewWhole(false, {sinceMs: 0, lost: false}, 'api-unanswered')
    await p.advance(30_000)
    expect(p.dry.engine.verdict('a'), 'not overdue: blind time is not silence').to.equal(undefined)
    for (const fx of [p.real, p.dry]) fx.engine.setViewWhole(true)
    await p.advance(1_000)
    expect(p.dry.wouldMarks).to.deep.equal(p.real.marks)
    expect(p.dry.wouldMarks).to.have.length(1)
  })
})
