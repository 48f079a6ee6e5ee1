/**
 * The verdict record (PoolLifecycle.verdict, and the record on a mark's Event): why a pool was marked,
 * or what holds it, with the silence, the blind time cut out and its reasons, the confirming read and
 * the last error; exact figures on the fake clock.
 */
import {expect} from 'chai'
import {VERDICT_ANNOTATION, type VerdictRecord} from '../../../../src/core/lifecycle/verdict.ts'
import {BlindLedger, buildVerdict, MAX_SPELLS, parseVerdict, verdictAnnotation, type VerdictFacts} from '../../../../src/core/lifecycle/verdict-record.ts'
import {parseMaxUnhealthy} from '../../../../src/core/lifecycle/mass-silence/max-unhealthy.ts'
import {GRACE, LifecycleFixture} from '../../../support/lifecycle-fixture.ts'

const T0 = Date.parse('2026-01-01T00:00:00Z')
const at = (ms: number) => new Date(T0 + ms).toISOString()
const recordOn = (fx: LifecycleFixture, reason: string): VerdictRecord => {
  const event = fx.events.events.find((e) => e.reason === reason)
  return JSON.parse(event?.annotations?.[VERDICT_ANNOTATION] ?? 'null') as VerdictRecord
}

describe('controller lifecycle: the verdict record', () => {
  it('a pool marked after a blind spell: its record has the silence counted, the blind time cut out and the reason, adding up to the wall time since its last progress', async () => {
    const fx = new LifecycleFixture({identity: 'host-1_abc'})
    fx.putPool('p', {ready: 'True'})
    fx.renew('p', 'r1')
    await fx.advance(20_000)
    fx.engine.setViewWhole(false, {sinceMs: 0, lost: false}, 'api-unanswered')
    await fx.advance(12_400)
    fx.engine.setViewWhole(true)
    await fx.advance(GRACE - 20_000)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
    const record = recordOn(fx, 'MachinePoolStatusUnknown')
    expect(record).to.deep.equal({
      version: 1,
      kind: 'machine',
      pool: 'p',
      uid: 'uid-p',
      controller: 'host-1_abc',
      dryRun: false,
      state: 'marked',
      stateSince: at(62_400),
      lastProgress: {renewTime: 'r1', readyStatus: 'True', observedAt: at(0)},
      gracePeriodMs: GRACE,
      silenceMs: GRACE,
      blindExcludedMs: 12_400,
      blindReasons: ['api-unanswered'],
      confirm: {outcome: 'silent', at: at(62_400)},
      retries: 0,
      limiter: {queued: 0, inFlight: 1},
      at: at(62_400),
    })
    // The engine keeps the record of the marked pool (the Ready absorbed since, the figures as taken).
    expect(fx.engine.verdict('p')).to.deep.include({state: 'marked', silenceMs: GRACE, blindExcludedMs: 12_400})
  })

  it('a spell before the last progress is not in the record; two spells after it are, with both reasons in order', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    fx.engine.setViewWhole(false, {sinceMs: 0, lost: false}, 'paused')
    await fx.advance(5_000)
    fx.engine.setViewWhole(true)
    fx.renew('p', 'r1')
    const progress = fx.clock.wall()
    for (const reason of ['watch-gap', 'api-unanswered'] as const) {
      await fx.advance(1_000)
      fx.engine.setViewWhole(false, {sinceMs: 0, lost: false}, reason)
      await fx.advance(3_000)
      fx.engine.setViewWhole(true)
    }
    await fx.advance(GRACE - 2_000)
    const record = recordOn(fx, 'MachinePoolStatusUnknown')
    expect(record).to.deep.include({silenceMs: GRACE, blindExcludedMs: 6_000, blindReasons: ['watch-gap', 'api-unanswered']})
    expect(record.lastProgress.observedAt).to.equal(new Date(progress).toISOString())
  })

  it('a spell seen late that began before the last progress (the clock steps back past it): the overlap is blind time, silence and blind time still add up to the wall time since the progress', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    await fx.advance(10_000)
    fx.renew('p', 'r1')
    await fx.advance(2_000)
    // Seen now, begun 5 s ago: 3 s before the renewal was seen.
    fx.engine.setViewWhole(false, {sinceMs: 5_000, lost: false}, 'api-unanswered')
    await fx.advance(4_000)
    fx.engine.setViewWhole(true)
    // The clock stood still from 7 s to 16 s: the renewal seen at 10 s lies inside the cut, so the
    // engine counts its silence from 7 s on the evidence clock; 9 s since it were not counted.
    await fx.advance(GRACE + 2_999)
    expect(fx.marks).to.deep.equal([])
    await fx.advance(1)
    const record = recordOn(fx, 'MachinePoolStatusUnknown')
    expect(record).to.deep.include({silenceMs: GRACE, blindExcludedMs: 9_000, blindReasons: ['api-unanswered']})
    expect(record.lastProgress.observedAt).to.equal(at(10_000))
    expect(Date.parse(record.at) - Date.parse(record.lastProgress.observedAt)).to.equal(record.silenceMs + record.blindExcludedMs)
  })

  it('an overdue pool held by blindness: state held, hold blind, since the spell began; the record keeps counting silence up to the spell', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    fx.engine['options'].confirmLease = () => new Promise(() => {})
    await fx.advance(GRACE)
    expect(fx.engine.verdict('p')?.state).to.equal('confirming')
    fx.engine['options'].confirmLease = () => Promise.resolve(undefined)
    await fx.advance(5_000)
    expect(fx.engine.verdict('p')).to.deep.include({state: 'retrying', retries: 1})
    fx.engine.setViewWhole(false, {sinceMs: 0, lost: false}, 'api-unanswered')
    await fx.advance(7_000)
    expect(fx.engine.verdict('p')).to.deep.include({state: 'held', hold: 'blind', stateSince: at(GRACE + 5_000), silenceMs: GRACE + 5_000, blindExcludedMs: 7_000, blindReasons: ['api-unanswered']})
    expect(fx.engine.verdict('p')?.confirm).to.deep.include({outcome: 'failed'})
  })

  it('a pool whose write keeps failing: state retrying with the last error, and one Event with the record at the second failure', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    fx.store.script.failNext('writeConditions', () => new Error('HTTP 500: failed calling webhook'), 3)
    await fx.advance(GRACE)
    expect(fx.engine.verdict('p')).to.deep.include({state: 'retrying', retries: 1, lastError: 'writing Ready=Unknown failed: HTTP 500: failed calling webhook'})
    expect(fx.events.events).to.deep.equal([])
    await fx.advance(1_000)
    await fx.advance(2_000)
    expect(fx.events.events.map((e) => e.reason)).to.deep.equal(['MachinePoolUnknownWriteRetrying'])
    expect(recordOn(fx, 'MachinePoolUnknownWriteRetrying')).to.deep.include({state: 'retrying', retries: 2, stateSince: at(GRACE + 1_000)})
    await fx.advance(4_000)
    expect(fx.events.events.map((e) => e.reason)).to.deep.equal(['MachinePoolUnknownWriteRetrying', 'MachinePoolStatusUnknown'])
    expect(recordOn(fx, 'MachinePoolStatusUnknown')).to.deep.include({state: 'marked', retries: 3})
  })

  it('pools held by the breaker: state held, hold breaker, since it tripped, with the breaker state', async () => {
    const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy('1')})
    for (const name of ['a', 'b', 'c']) fx.putPool(name, {ready: 'True'})
    await fx.advance(GRACE)
    await fx.advance(GRACE / 5)
    expect(fx.engine.verdict('a')).to.deep.include({state: 'held', hold: 'breaker', stateSince: at(GRACE), breaker: {tripped: true, unhealthy: 3, total: 3}})
  })

  it('a pool in the breaker\'s hold window (the breaker closed): state held, hold breaker-window, since it fell due', async () => {
    const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy('3')})
    fx.putPool('a', {ready: 'True'})
    await fx.advance(GRACE)
    expect(fx.engine.verdict('a')).to.deep.include({state: 'held', hold: 'breaker-window', stateSince: at(GRACE), breaker: {tripped: false, unhealthy: 1, total: 1}})
    await fx.advance(GRACE / 5)
    expect(fx.engine.verdict('a')?.state).to.equal('marked')
  })

  it('a pool not overdue has no record', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE - 1)
    expect(fx.engine.verdict('p')).to.equal(undefined)
    expect(fx.engine.verdict('nope')).to.equal(undefined)
  })

  it('the ledger stays bounded: past MAX_SPELLS spells the time still counts, the oldest reasons drop', () => {
    const ledger = new BlindLedger()
    let cut = 0
    for (let i = 0; i < MAX_SPELLS + 10; i++) {
      ledger.stopped(i * 10, i < 10 ? 'paused' : 'watch-gap')
      cut += 1
      ledger.resumed(cut)
    }
    expect(ledger.since(0, cut)).to.deep.equal({ms: MAX_SPELLS + 10, reasons: ['watch-gap']})
    expect(ledger.since(10 * 100, cut)).to.deep.equal({ms: MAX_SPELLS + 10 - 101, reasons: ['watch-gap']})
  })
})

describe('the verdict record, built and read back', () => {
  const facts = (over: Partial<VerdictFacts> = {}): VerdictFacts => ({
    kind: 'machine',
    pool: 'p',
    controller: 'c',
    dryRun: false,
    state: 'retrying',
    stateSinceWall: T0 + 1_000,
    lastChange: 0,
    evidenceNow: 50_000,
    wallNow: T0 + 60_000,
    blind: {ms: 10_000, reasons: ['paused']},
    gracePeriodMs: 50_000,
    notes: {},
    retries: 0,
    limiter: {queued: 0, inFlight: 0},
    ...over,
  })

  it('carries each fact the engine has, and leaves out those it has not', () => {
    const full = buildVerdict(
      facts({
        uid: 'u1',
        hold: 'blind',
        renewTime: 'r1',
        leaseResourceVersion: '42',
        readyStatus: 'True',
        notes: {confirm: {outcome: 'failed', atWall: T0 + 2_000, detail: 'no answer'}, lastError: 'HTTP 500'},
        retries: 3,
        breaker: {tripped: true, unhealthy: 3, total: 4},
        nextLookInMs: 1_500,
      }),
    )
    expect(full).to.deep.equal({
      version: 1,
      kind: 'machine',
      pool: 'p',
      uid: 'u1',
      controller: 'c',
      dryRun: false,
      state: 'retrying',
      stateSince: at(1_000),
      hold: 'blind',
      lastProgress: {renewTime: 'r1', leaseResourceVersion: '42', readyStatus: 'True', observedAt: at(0)},
      gracePeriodMs: 50_000,
      silenceMs: 50_000,
      blindExcludedMs: 10_000,
      blindReasons: ['paused'],
      confirm: {outcome: 'failed', at: at(2_000), detail: 'no answer'},
      retries: 3,
      lastError: 'HTTP 500',
      breaker: {tripped: true, unhealthy: 3, total: 4},
      limiter: {queued: 0, inFlight: 0},
      nextLookAt: at(61_500),
      at: at(60_000),
    })
    const bare = buildVerdict(facts({notes: {confirm: {outcome: 'silent', atWall: T0}}}))
    expect(Object.keys(bare)).to.deep.equal(['version', 'kind', 'pool', 'controller', 'dryRun', 'state', 'stateSince', 'lastProgress', 'gracePeriodMs', 'silenceMs', 'blindExcludedMs', 'blindReasons', 'confirm', 'retries', 'limiter', 'at'])
    expect(bare.lastProgress).to.deep.equal({observedAt: at(0)})
    expect(bare.confirm).to.deep.equal({outcome: 'silent', at: at(0)})
    expect(buildVerdict(facts({nextLookInMs: -500})).nextLookAt, 'a look overdue is now').to.equal(at(60_000))
  })

  it('reads back a record of its own version; nothing from an absent, unreadable, newer or malformed one', () => {
    const record = buildVerdict(facts())
    expect(parseVerdict(verdictAnnotation(record))).to.deep.equal(record)
    for (const text of [undefined, 'not json', 'null', '5', JSON.stringify({...record, version: 2}), JSON.stringify({...record, pool: 7}), JSON.stringify({...record, state: undefined})]) {
      expect(parseVerdict(text), String(text)).to.equal(undefined)
    }
  })

  it('the ledger names a spell going on only once blind time accrued after the instant asked about', () => {
    const ledger = new BlindLedger()
    ledger.stopped(100, 'paused')
    expect(ledger.after(500, 500).reasons, 'no time cut out since').to.deep.equal([])
    expect(ledger.after(500, 501).reasons).to.deep.equal(['paused'])
    expect(ledger.since(100, 50).reasons, 'a spell that stood still at from itself is taken as before it').to.deep.equal([])
    expect(ledger.since(101, 50).reasons).to.deep.equal([])
    expect(ledger.since(99, 50).reasons).to.deep.equal(['paused'])
    ledger.resumed(50)
    expect(ledger.blindAt).to.equal(undefined)
  })

  it('a spell dropped from the ledger at exactly from still counts as before it', () => {
    const ledger = new BlindLedger()
    for (let i = 0; i <= MAX_SPELLS; i++) {
      ledger.stopped(i * 10, 'paused')
      ledger.resumed((i + 1) * 5)
    }
    // The first spell (at 0, 5 ms cut out by its end) was dropped.
    expect(ledger.since(0, (MAX_SPELLS + 1) * 5).ms).to.equal(MAX_SPELLS * 5)
  })
})
