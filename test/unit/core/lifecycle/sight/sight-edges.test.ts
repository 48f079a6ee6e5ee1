/**
 * The sight at its edges: the exact thresholds (a window's first instant, a lag of exactly maxLagMs, a
 * settle window's last instant), the instant a listener hears a change (at once, not at the next tick),
 * what counts as an answer for a stall, a stop while a request is out, a listener that throws.
 */
import {expect} from 'chai'
import {ForbiddenError} from '../../../../../src/core/errors.ts'
import {Sight, sightTimings, type SightOptions, type SightState} from '../../../../../src/core/lifecycle/sight/sight.ts'
import {FakeClock} from '../../../../support/fake-clock.ts'
import {FakeLogger} from '../../../../support/fake-logger.ts'

/** A 50 s grace period: probe every 5 s, deadline 5 s, tick 1 s, lag 5 s; no write probe unless given. */
const PRODUCTION = sightTimings(50_000)

type Mode = 'ok' | 'fail' | 'forbidden' | 'hang'

/** A request the test scripts: it answers, fails (503, an error answered), is refused (403), or hangs until its signal aborts. */
class Scripted {
  mode: Mode = 'ok'
  calls = 0
  readonly call = (signal: AbortSignal): Promise<void> => {
    this.calls++
    if (this.mode === 'ok') return Promise.resolve()
    if (this.mode === 'fail') return Promise.reject(new Error('HTTP 503: etcdserver: request timed out'))
    if (this.mode === 'forbidden') return Promise.reject(new ForbiddenError('leases is forbidden'))
    return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), {once: true}))
  }
}

/** A probe whose every call waits for the test to answer it (or its signal to abort it). */
class ManualProbe {
  calls: {at: number; resolve: () => void; reject: (e: Error) => void}[] = []
  private readonly clock: FakeClock
  constructor(clock: FakeClock) {
    this.clock = clock
  }
  readonly call = (signal: AbortSignal): Promise<void> =>
    new Promise((resolve, reject) => {
      this.calls.push({at: this.clock.monotonic(), resolve, reject})
      signal.addEventListener('abort', () => reject(signal.reason as Error), {once: true})
    })
}

type Timings = Pick<SightOptions, 'probeIntervalMs' | 'probeTimeoutMs' | 'tickMs' | 'maxLagMs' | 'writeProbeIntervalMs' | 'writeProbeTimeoutMs'>

function setup(timings: Timings, probe: (signal: AbortSignal) => Promise<void>, writeProbe?: (signal: AbortSignal) => Promise<void>, clock = new FakeClock()) {
  const logger = new FakeLogger()
  const sight = new Sight({clock, logger, probe, ...timings, ...(writeProbe === undefined ? {} : {writeProbe})})
  const states: SightState[] = []
  sight.subscribe((s) => states.push(s))
  const stop = new AbortController()
  void sight.run(stop.signal)
  const reasons = () => states.map((s) => s.reason)
  return {clock, logger, sight, states, reasons, stop}
}

/** Ticks every 700 ms, probes every 1000 ms: a change made by a probe or a write at a whole second is no tick's. */
const OFF_TICK = {probeIntervalMs: 1000, probeTimeoutMs: 500, tickMs: 700, maxLagMs: 1000}

describe('Sight: the edges of its rules', () => {
  it('a failure at the very start of the request window still counts: four at 2 s and one at 12 s (a 10 s window) blind it', async () => {
    const reads = new Scripted()
    const {clock, sight, stop} = setup(PRODUCTION, reads.call)
    await clock.advance(2_000)
    for (let i = 0; i < 4; i++) sight.reportRequest(false, 'slow')
    await clock.advance(10_000)
    sight.reportRequest(false, 'slow')
    expect(sight.state).to.deep.include({reason: 'api-unanswered', detail: '5 of 5 requests failed within 10000 ms, the last: slow'})
    stop.abort()
  })

  it('an answered request never blinds it, though the answers that kept the failures under half have left the window', async () => {
    const reads = new Scripted()
    const {clock, sight, reasons, stop} = setup(PRODUCTION, reads.call)
    await clock.advance(2_000)
    for (let i = 0; i < 6; i++) sight.reportRequest(true)
    await clock.advance(5_000)
    // 5 of 11 failed: under half, no outage.
    for (let i = 0; i < 5; i++) sight.reportRequest(false, 'slow')
    await clock.advance(5_001)
    // The six answers at 2 s have left the window: with this answer, 5 of 6 failed; an answer is still no failure.
    sight.reportRequest(true)
    expect(sight.check()).to.be.true
    expect(reasons()).to.deep.equal([undefined])
    stop.abort()
  })

  it('more failures while the requests already blind it do not move its start: a probe sent after the first ones ends it', async () => {
    const clock = new FakeClock()
    const probe = new ManualProbe(clock)
    const {sight, stop} = setup(PRODUCTION, probe.call, undefined, clock)
    await clock.advance(0)
    probe.calls[0]!.resolve()
    await clock.advance(2_000)
    for (let i = 0; i < 5; i++) sight.reportRequest(false, 'first')
    expect(sight.check()).to.be.false
    await clock.advance(3_000)
    expect(probe.calls.at(-1)?.at, 'a probe out at 5 s').to.equal(5_000)
    await clock.advance(1_000)
    for (let i = 0; i < 5; i++) sight.reportRequest(false, 'second')
    await clock.advance(500)
    probe.calls.at(-1)!.resolve()
    await clock.advance(0)
    expect(sight.check(), 'the probe of 5 s was sent after the failures of 2 s').to.be.true
    stop.abort()
  })

  it('a probe sent before the requests failed together does not end their blindness; the next one does', async () => {
    const clock = new FakeClock()
    const probe = new ManualProbe(clock)
    const {sight, stop} = setup(PRODUCTION, probe.call, undefined, clock)
    await clock.advance(0)
    probe.calls[0]!.resolve()
    await clock.advance(6_000)
    expect(probe.calls.at(-1)?.at).to.equal(5_000)
    for (let i = 0; i < 5; i++) sight.reportRequest(false, 'slow')
    await clock.advance(500)
    probe.calls.at(-1)!.resolve()
    await clock.advance(0)
    expect(sight.check(), 'answered after the failures, sent before them').to.be.false
    expect(sight.state.detail).to.equal('5 of 5 requests failed within 10000 ms, the last: slow')
    await clock.advance(5_000)
    expect(probe.calls.at(-1)?.at).to.equal(11_500)
    probe.calls.at(-1)!.resolve()
    await clock.advance(0)
    expect(sight.check()).to.be.true
    stop.abort()
  })

  it('a tick late by exactly maxLagMs is no pause (production timings: a tick of 1 s, 5 s late)', async () => {
    const clock = new FakeClock()
    const probe = new ManualProbe(clock)
    const {sight, reasons, stop} = setup(PRODUCTION, probe.call, undefined, clock)
    await clock.advance(0)
    probe.calls[0]!.resolve()
    // The tick due at 1 s fires at 6 s; the probe sent then stays unanswered, so nothing but the tick speaks.
    await clock.jump(6_000)
    expect(reasons()).to.deep.equal([undefined])
    expect(sight.check()).to.be.true
    stop.abort()
  })

  it('probes that time out say so: no answer within the probe deadline, three in a row, blind since the last answer', async () => {
    const clock = new FakeClock()
    const probe = new ManualProbe(clock)
    const {states, stop} = setup({probeIntervalMs: 1000, probeTimeoutMs: 500, tickMs: 100, maxLagMs: 1000}, probe.call, undefined, clock)
    await clock.advance(0)
    probe.calls[0]!.resolve()
    // Probes at 1 s, 2.5 s and 4 s, each given up 0.5 s later.
    await clock.advance(4_500)
    expect(states.at(-1)).to.deep.equal({reason: 'api-unanswered', detail: 'no answer within 500 ms (3 probes failed in a row)', blindForMs: 4_500})
    stop.abort()
  })

  it('stopping the sight while a probe is out counts no failure: two failed probes and a stop blind nothing', async () => {
    const reads = new Scripted()
    const {clock, reasons, stop} = setup(PRODUCTION, reads.call)
    await clock.advance(0)
    reads.mode = 'fail'
    await clock.advance(10_000)
    reads.mode = 'hang'
    await clock.advance(5_000)
    expect(reads.calls).to.equal(4)
    stop.abort()
    await clock.advance(5_000)
    expect(reasons()).to.deep.equal([undefined])
  })

  it('the third failed probe is heard at once, not at the next tick', async () => {
    const reads = new Scripted()
    const {clock, reasons, stop} = setup(OFF_TICK, reads.call)
    await clock.advance(500)
    reads.mode = 'fail'
    // Probes fail at 1 s, 2 s and 3 s; the ticks are at 2.8 s and 3.5 s.
    await clock.advance(2_500)
    expect(reasons()).to.deep.equal([undefined, 'api-unanswered'])
    stop.abort()
  })

  it('stopping the sight while a write probe is out counts no failure: one failed write and a stop blind nothing', async () => {
    const writes = new Scripted()
    const {clock, reasons, stop} = setup(PRODUCTION, new Scripted().call, writes.call)
    await clock.advance(1)
    writes.mode = 'fail'
    await clock.advance(10_000)
    writes.mode = 'hang'
    await clock.advance(10_000)
    expect(writes.calls).to.equal(3)
    stop.abort()
    await clock.advance(10_000)
    expect(reasons()).to.deep.equal([undefined])
  })

  it('writes that land are answers: no stall while every read probe hangs', async () => {
    const reads = new Scripted()
    const writes = new Scripted()
    const {clock, sight, stop} = setup({...PRODUCTION, writeProbeIntervalMs: 4_000, writeProbeTimeoutMs: 10_000}, reads.call, writes.call)
    await clock.advance(1)
    reads.mode = 'hang'
    // Read probes at 5 s and 15 s fail at 10 s and 20 s (two: no threshold); writes land every 4 s.
    await clock.advance(24_000)
    expect(sight.check()).to.be.true
    stop.abort()
  })

  it('a write probe refused with an error (503) is an answer too: no stall while every read probe hangs', async () => {
    const reads = new Scripted()
    const writes = new Scripted()
    const {clock, sight, stop} = setup({...PRODUCTION, writeProbeIntervalMs: 6_000, writeProbeTimeoutMs: 10_000}, reads.call, writes.call)
    await clock.advance(1)
    reads.mode = 'hang'
    // Writes land at 0 s and 12 s; the one at 6 s is answered with a 503 (one failure: no outage).
    clock.setTimer(5_000, () => (writes.mode = 'fail'))
    clock.setTimer(7_000, () => (writes.mode = 'ok'))
    await clock.advance(11_000)
    expect(sight.check(), 'the 503 at 6 s was the last answer').to.be.true
    stop.abort()
  })

  it('a write probe given up at its deadline is no answer: it does not end a stall', async () => {
    const reads = new Scripted()
    const writes = new Scripted()
    const {clock, sight, stop} = setup(PRODUCTION, reads.call, writes.call)
    await clock.advance(1)
    reads.mode = 'hang'
    writes.mode = 'hang'
    // Nothing answers after 0 s: a stall from 10 s. The write of 10 s is given up at 20 s.
    await clock.advance(10_500)
    expect(sight.check()).to.be.false
    await clock.advance(10_000)
    expect(sight.check()).to.be.false
    expect(sight.state.detail).to.match(/^no answer from the API for \d+ ms/)
    stop.abort()
  })

  it('writes failing blind it from the second failure of the run when none ever landed, whatever fails after', async () => {
    const reads = new Scripted()
    const writes = new Scripted()
    writes.mode = 'fail'
    const {clock, states, stop} = setup(PRODUCTION, reads.call, writes.call)
    // Writes fail at 0 s, 10 s (blind, since 10 s) and 20 s.
    await clock.advance(20_000)
    expect(states.at(-1)).to.deep.include({reason: 'api-unanswered', blindForMs: 0})
    // A pause, then a probe sent after it: the writes' blindness is said again, as long as it is by now.
    await clock.jump(7_000)
    expect(states.map((s) => s.reason)).to.deep.equal([undefined, 'api-unanswered', 'paused', 'api-unanswered'])
    expect(states.at(-1)).to.deep.equal({reason: 'api-unanswered', detail: 'writes fail: HTTP 503: etcdserver: request timed out', blindForMs: 17_000})
    stop.abort()
  })

  it('writes failing blind it at once, and an answered refusal after them clears it at once, not at the next tick', async () => {
    const reads = new Scripted()
    const writes = new Scripted()
    // A read probe every 5 s: nothing but the writes speaks between the ticks.
    const {clock, reasons, stop} = setup({...OFF_TICK, probeIntervalMs: 5000, writeProbeIntervalMs: 1000, writeProbeTimeoutMs: 500}, reads.call, writes.call)
    await clock.advance(500)
    writes.mode = 'fail'
    // Writes fail at 1 s and 2 s (ticks at 1.4 s and 2.1 s).
    await clock.advance(1_500)
    expect(reasons()).to.deep.equal([undefined, 'api-unanswered'])
    writes.mode = 'forbidden'
    // Refused at 3 s (ticks at 2.8 s and 3.5 s): counts as landed, no settle window.
    await clock.advance(1_000)
    expect(reasons()).to.deep.equal([undefined, 'api-unanswered', undefined])
    stop.abort()
  })

  it('the settle window ends at its instant, heard then, not at the next tick', async () => {
    const reads = new Scripted()
    const writes = new Scripted()
    const {clock, reasons, stop} = setup({...OFF_TICK, writeProbeIntervalMs: 1000, writeProbeTimeoutMs: 2500}, reads.call, writes.call)
    await clock.advance(500)
    writes.mode = 'fail'
    await clock.advance(2_000)
    writes.mode = 'ok'
    // Lands at 3 s: blind until 3 s + 1 s + 2.5 s = 6.5 s (ticks at 6.3 s and 7 s, probes at 6 s and 7 s).
    await clock.advance(3_999)
    expect(reasons()).to.deep.equal([undefined, 'api-unanswered'])
    await clock.advance(1)
    expect(reasons()).to.deep.equal([undefined, 'api-unanswered', undefined])
    stop.abort()
  })

  it('a check at the settle window’s last instant, before its timer, finds it over', async () => {
    const clock = new FakeClock()
    const reads = new Scripted()
    const writes = new Scripted()
    let atEnd: boolean | undefined
    // Set before the settle window's own timer, so it runs first at the same instant.
    clock.setTimer(6_500, () => (atEnd = sight.check()))
    const {sight, stop} = setup({...OFF_TICK, writeProbeIntervalMs: 1000, writeProbeTimeoutMs: 2500}, reads.call, writes.call, clock)
    await clock.advance(500)
    writes.mode = 'fail'
    await clock.advance(2_000)
    writes.mode = 'ok'
    await clock.advance(4_000)
    expect(atEnd, 'checked at 6.5 s').to.be.true
    stop.abort()
  })

  it('a settle window is not cut short by the end of an earlier one that writes failing again replaced', async () => {
    const reads = new Scripted()
    const writes = new Scripted()
    const {clock, sight, stop} = setup({...PRODUCTION, probeIntervalMs: 1000, writeProbeIntervalMs: 1000, writeProbeTimeoutMs: 5000}, reads.call, writes.call)
    // Writes: 0 s lands, 1 s and 2 s fail, 3 s lands (settling until 9 s), 4 s and 5 s fail, 6 s lands (until 12 s).
    const script: Mode[] = ['ok', 'fail', 'fail', 'ok', 'fail', 'fail', 'ok']
    for (const [i, mode] of script.entries()) clock.setTimer(i * 1000 - 1, () => (writes.mode = mode))
    await clock.advance(10_000)
    expect(sight.check(), 'the first window ended at 9 s; the second runs to 12 s').to.be.false
    expect(sight.state.reason).to.equal('api-unanswered')
    await clock.advance(2_000)
    expect(sight.check()).to.be.true
    stop.abort()
  })

  it('says how long it still settles when it is told after a pause', async () => {
    const reads = new Scripted()
    const writes = new Scripted()
    const {clock, states, stop} = setup({probeIntervalMs: 1000, probeTimeoutMs: 500, tickMs: 100, maxLagMs: 1000, writeProbeIntervalMs: 1000, writeProbeTimeoutMs: 20_000}, reads.call, writes.call)
    await clock.advance(500)
    writes.mode = 'fail'
    await clock.advance(2_000)
    writes.mode = 'ok'
    // Lands at 3 s: settling until 24 s. Paused from 3 s to 5 s; the probe sent at 5 s ends the pause.
    await clock.advance(500)
    await clock.jump(2_000)
    expect(states.map((s) => s.reason)).to.deep.equal([undefined, 'api-unanswered', 'paused', 'api-unanswered'])
    expect(states.at(-1)).to.deep.equal({reason: 'api-unanswered', detail: 'writes land again; settling for 19000 ms so that every live poollet can renew first'})
    stop.abort()
  })

  it('a stall ended by another request’s answer is heard at once, not at the next tick', async () => {
    const reads = new Scripted()
    const {clock, sight, reasons, stop} = setup(PRODUCTION, reads.call)
    await clock.advance(0)
    reads.mode = 'hang'
    await clock.advance(10_000)
    expect(reasons()).to.deep.equal([undefined, 'api-unanswered'])
    await clock.advance(500)
    sight.reportRequest(true)
    expect(reasons()).to.deep.equal([undefined, 'api-unanswered', undefined])
    stop.abort()
  })

  it('no stall while nothing was sent: a probe interval longer than a request deadline leaves nothing to wait for', async () => {
    const reads = new Scripted()
    const {clock, sight, reasons, stop} = setup({probeIntervalMs: 20_000, probeTimeoutMs: 5_000, tickMs: 1_000, maxLagMs: 5_000}, reads.call)
    await clock.advance(15_000)
    expect(sight.check()).to.be.true
    expect(reasons()).to.deep.equal([undefined])
    stop.abort()
  })

  it('a listener that throws is logged; the others still hear', async () => {
    const reads = new Scripted()
    const clock = new FakeClock()
    const logger = new FakeLogger()
    const sight = new Sight({clock, logger, probe: reads.call, ...PRODUCTION})
    sight.subscribe(() => {
      throw new Error('boom')
    })
    const heard: SightState[] = []
    sight.subscribe((s) => heard.push(s))
    const stop = new AbortController()
    void sight.run(stop.signal)
    await clock.advance(0)
    expect(heard.map((s) => s.reason)).to.deep.equal([undefined])
    expect(logger.at('error')).to.deep.equal([{level: 'error', obj: {err: 'boom'}, msg: 'sight listener failed'}])
    stop.abort()
  })
})
