/** The controller's sight: its loop runs on time and the API answers promptly, or it is blind. */
import {expect} from 'chai'
import {PROBE_FAILURE_THRESHOLD, Sight, sightTimings, type SightOptions, type SightState} from '../../../../../src/core/lifecycle/sight/sight.ts'
import {FakeClock} from '../../../../support/fake-clock.ts'
import {FakeLogger} from '../../../../support/fake-logger.ts'

/** Short timings, for the mechanics; the rules are tested at the production timings too. */
const TIMINGS = {probeIntervalMs: 1000, probeTimeoutMs: 500, tickMs: 100, maxLagMs: 1000}
/** The production timings: a 50 s grace period (probe every 5 s, deadline 5 s, tick 1 s, lag 5 s). */
const PRODUCTION = sightTimings(50_000)

/** A probe the test answers: each call waits until answered, or answers at once in 'auto' mode. */
class ScriptedProbe {
  mode: 'auto' | 'fail' | 'manual' = 'auto'
  calls: {signal: AbortSignal; resolve: () => void; reject: (e: Error) => void}[] = []
  readonly probe = (signal: AbortSignal): Promise<void> => {
    if (this.mode === 'auto') return Promise.resolve()
    if (this.mode === 'fail') return Promise.reject(new Error('HTTP 503: etcdserver: request timed out'))
    return new Promise((resolve, reject) => this.calls.push({signal, resolve, reject}))
  }
}

function setup(timings: Pick<SightOptions, 'probeIntervalMs' | 'probeTimeoutMs' | 'tickMs' | 'maxLagMs'> = TIMINGS) {
  const clock = new FakeClock()
  const probe = new ScriptedProbe()
  const sight = new Sight({clock, logger: new FakeLogger(), probe: probe.probe, ...timings})
  const states: SightState[] = []
  sight.subscribe((s) => states.push(s))
  const stop = new AbortController()
  const running = sight.run(stop.signal)
  return {clock, probe, sight, states, stop, running}
}

describe('Sight', () => {
  it('is blind until the API has answered once, then whole', async () => {
    const clock = new FakeClock()
    const probe = new ScriptedProbe()
    probe.mode = 'manual'
    const sight = new Sight({clock, logger: new FakeLogger(), probe: probe.probe, ...TIMINGS})
    const stop = new AbortController()
    void sight.run(stop.signal)
    await clock.advance(0)
    expect(sight.check()).to.be.false
    expect(sight.state.reason).to.equal('api-unanswered')
    probe.calls[0]!.resolve()
    await clock.advance(0)
    expect(sight.check()).to.be.true
    stop.abort()
  })

  it('one failed probe is not blindness; three in a row are, counted from the last good answer; one good probe ends it', async () => {
    const {clock, probe, sight, states, stop} = setup(PRODUCTION)
    await clock.advance(0)
    expect(sight.check()).to.be.true
    probe.mode = 'fail'
    await clock.advance(5000)
    await clock.advance(5000)
    expect(sight.check(), `${PROBE_FAILURE_THRESHOLD - 1} failures`).to.be.true
    await clock.advance(5000)
    expect(sight.check()).to.be.false
    expect(sight.state).to.deep.equal({reason: 'api-unanswered', detail: 'HTTP 503: etcdserver: request timed out (3 probes failed in a row)', blindForMs: 15_000})
    probe.mode = 'auto'
    await clock.advance(5000)
    expect(sight.check()).to.be.true
    expect(states.map((s) => s.reason)).to.deep.equal([undefined, 'api-unanswered', undefined])
    stop.abort()
  })

  it('a good probe between failures starts the count again', async () => {
    const {clock, probe, states, stop} = setup(PRODUCTION)
    await clock.advance(0)
    for (const mode of ['fail', 'fail', 'auto', 'fail', 'fail', 'auto'] as const) {
      probe.mode = mode
      await clock.advance(5000)
    }
    expect(states.map((s) => s.reason)).to.deep.equal([undefined])
    stop.abort()
  })

  it('probes that hang are aborted at their deadline; no answer at all for a poollet request deadline (10 s) is a stall: blind since the last answer, until the next', async () => {
    const {clock, probe, sight, states, stop} = setup(PRODUCTION)
    await clock.advance(0)
    probe.mode = 'manual'
    await clock.advance(5000)
    const hung = probe.calls[0]!
    await clock.advance(4999)
    expect(hung.signal.aborted).to.be.false
    await clock.advance(1)
    expect(hung.signal.aborted).to.be.true
    // The answer at 0 s was the last: at 10 s nothing has answered for a request deadline.
    expect(sight.check()).to.be.false
    expect(sight.state).to.deep.equal({reason: 'api-unanswered', detail: 'no answer from the API for 10000 ms (a poollet\'s request deadline is 10000 ms)', blindForMs: 10_000})
    // The probe at 15 s answers: the stall is over (the poollets' retries in it land as it ends).
    await clock.advance(4999)
    expect(sight.check(), 'still nothing answered').to.be.false
    await clock.advance(1)
    probe.calls[1]!.resolve()
    await clock.advance(0)
    expect(sight.check()).to.be.true
    expect(states.map((s) => s.reason)).to.deep.equal([undefined, 'api-unanswered', undefined])
    stop.abort()
  })

  it('a single hanging probe among answers is no stall (a lossy link): the next probe answers within the deadline', async () => {
    const {clock, probe, sight, states, stop} = setup(PRODUCTION)
    await clock.advance(4000)
    probe.mode = 'manual'
    // The probe at 5 s hangs until its deadline at 10 s; the next, at 15 s, answers: 15 s since the
    // last answer, but a write probe or a confirming read answered between (as every few seconds).
    await clock.advance(2000)
    sight.reportRequest(true)
    await clock.advance(4000)
    expect(probe.calls[0]!.signal.aborted).to.be.true
    await clock.advance(5000)
    probe.calls[1]!.resolve()
    await clock.advance(0)
    expect(sight.check()).to.be.true
    expect(states.map((s) => s.reason)).to.deep.equal([undefined])
    stop.abort()
  })

  it('sees a pause at once, even from a timer that fires before its own tick (production timings)', async () => {
    const {clock, probe, sight, stop} = setup(PRODUCTION)
    await clock.advance(0)
    expect(sight.check()).to.be.true
    probe.mode = 'manual'
    let seenByDeadline: boolean | undefined
    // A grace deadline due before the next tick (1 s): after the pause it fires first. The last good
    // probe is 10 s old, far from stale (35 s): only the pause check in check() can see it.
    clock.setTimer(500, () => (seenByDeadline = sight.check()))
    await clock.jump(10_000)
    expect(seenByDeadline).to.be.false
    expect(sight.state.reason).to.equal('paused')
    expect(sight.state.detail).to.match(/the event loop ran \d+ ms late/)
    expect(sight.state.blindForMs, 'the pause itself, for the blind time').to.equal(9000)
    stop.abort()
  })

  it('a pause ends only when a probe started after it has answered', async () => {
    const {clock, probe, sight, states, stop} = setup()
    await clock.advance(0)
    probe.mode = 'manual'
    await clock.advance(999) // the next probe is due at 1000
    await clock.jump(5000) // stopped for 5 s: that probe starts only now, after the pause was seen
    expect(sight.state.reason).to.equal('paused')
    expect(probe.calls).to.have.length(1)
    probe.calls[0]!.resolve()
    await clock.advance(0)
    expect(sight.check()).to.be.true
    expect(states.map((s) => s.reason)).to.deep.equal([undefined, 'paused', undefined])
    stop.abort()
  })

  it('a probe sent before the pause, answered after it, does not end it', async () => {
    const {clock, probe, sight, stop} = setup()
    await clock.advance(0)
    probe.mode = 'manual'
    await clock.advance(1000)
    expect(probe.calls).to.have.length(1)
    await clock.jump(5000)
    // The answer waited in the socket while the process was stopped.
    probe.calls[0]!.resolve()
    await clock.advance(0)
    expect(sight.state.reason).to.equal('paused')
    await clock.advance(1000)
    expect(probe.calls).to.have.length(2)
    probe.calls[1]!.resolve()
    await clock.advance(0)
    expect(sight.check()).to.be.true
    stop.abort()
  })

  it('a lag under maxLagMs is no pause', async () => {
    const {clock, sight, states, stop} = setup()
    await clock.advance(0)
    await clock.jump(900)
    expect(sight.check()).to.be.true
    expect(states.map((s) => s.reason)).to.deep.equal([undefined])
    stop.abort()
  })

  it('one failed request is that request’s trouble; many failing together blind the sight until a probe sent after them answers', async () => {
    const {clock, sight, stop} = setup(PRODUCTION)
    await clock.advance(0)
    for (let i = 0; i < 4; i++) sight.reportRequest(false, 'get lease ironcore-machinepool-lease/p: no answer within 5000 ms')
    expect(sight.check(), 'four failures').to.be.true
    await clock.advance(1000)
    sight.reportRequest(false, 'get lease ironcore-machinepool-lease/q: no answer within 5000 ms')
    expect(sight.check()).to.be.false
    expect(sight.state).to.deep.equal({
      reason: 'api-unanswered',
      detail: '5 of 5 requests failed within 10000 ms, the last: get lease ironcore-machinepool-lease/q: no answer within 5000 ms',
      blindForMs: 1000,
    })
    await clock.advance(4000)
    expect(sight.check(), 'the probe at 5 s, sent after the failures, answered').to.be.true
    stop.abort()
  })

  it('requests failing together blind the sight since the last answer before them, not since their failures were heard', async () => {
    const {clock, probe, sight, stop} = setup(PRODUCTION)
    await clock.advance(0)
    // The probe at 0 answered; then the API stops answering: the next probe hangs.
    probe.mode = 'manual'
    await clock.advance(2000)
    sight.reportRequest(true)
    // Confirming reads sent at 2 s give up at their 5 s deadline, all at 7 s: the API went quiet after the answer at 2 s.
    await clock.advance(5000)
    for (let i = 0; i < 5; i++) sight.reportRequest(false, 'no answer within 5000 ms')
    expect(sight.check()).to.be.false
    expect(sight.state.reason).to.equal('api-unanswered')
    expect(sight.state.blindForMs, 'since the answer at 2 s').to.equal(5000)
    stop.abort()
  })

  it('failures that are less than half of the answers, or spread beyond the window, are no outage', async () => {
    const {clock, sight, states, stop} = setup(PRODUCTION)
    await clock.advance(0)
    // A lossy link: one request in ten fails, for a minute.
    for (let i = 0; i < 600; i++) {
      sight.reportRequest(i % 10 !== 3, 'spoilt')
      await clock.advance(100)
    }
    // Five failures, each alone in its window.
    for (let i = 0; i < 5; i++) {
      sight.reportRequest(false, 'slow')
      await clock.advance(10_001)
    }
    expect(states.map((s) => s.reason)).to.deep.equal([undefined])
    stop.abort()
  })

  it('stops ticking and probing when aborted', async () => {
    const {clock, stop, running} = setup()
    await clock.advance(0)
    stop.abort()
    await running
    expect(clock.pending).to.equal(0)
  })

  it('derives its timings from the grace period: probes and lag well inside it', () => {
    expect(sightTimings(50_000)).to.deep.equal({probeIntervalMs: 5000, probeTimeoutMs: 5000, tickMs: 1000, maxLagMs: 5000, writeProbeIntervalMs: 10_000, writeProbeTimeoutMs: 10_000})
    const short = sightTimings(4000)
    expect(short).to.deep.equal({probeIntervalMs: 400, probeTimeoutMs: 1000, tickMs: 200, maxLagMs: 1000, writeProbeIntervalMs: 800, writeProbeTimeoutMs: 5000})
    for (const grace of [800, 4000, 50_000, 600_000]) {
      const t = sightTimings(grace)
      expect(t.probeIntervalMs, `grace ${grace}`).to.be.below(grace)
    }
  })

  it('says why it is blind before the first probe has answered: not yet probed', async () => {
    const clock = new FakeClock()
    const probe = new ScriptedProbe()
    probe.mode = 'manual'
    const sight = new Sight({clock, logger: new FakeLogger(), probe: probe.probe, ...TIMINGS})
    expect(sight.state).to.deep.equal({reason: 'api-unanswered', detail: 'not yet probed'})
    const stop = new AbortController()
    void sight.run(stop.signal)
    await clock.advance(0)
    expect(sight.check()).to.be.false
    expect(sight.state).to.deep.include({reason: 'api-unanswered', detail: 'not yet probed'})
    stop.abort()
  })

  it('a listener unsubscribed hears no more changes', async () => {
    const {clock, probe, sight, stop} = setup(PRODUCTION)
    await clock.advance(0)
    const heard: SightState[] = []
    const unsubscribe = sight.subscribe((s) => heard.push(s))
    unsubscribe()
    probe.mode = 'fail'
    await clock.advance(15_000)
    expect(sight.check()).to.be.false
    expect(heard).to.deep.equal([])
    stop.abort()
  })

  it('check() takes the time since the last tick for a pause only past tickMs + maxLagMs', async () => {
    const {clock, sight, stop} = setup()
    await clock.advance(5_000)
    // A deadline due before the next tick, checking the instant the process resumes.
    let seen: boolean | undefined
    clock.setTimer(50, () => (seen = sight.check()))
    await clock.jump(TIMINGS.tickMs + TIMINGS.maxLagMs)
    expect(seen, 'exactly tickMs + maxLagMs after the last tick').to.be.true
    expect(sight.state.reason).to.equal(undefined)
    let state: SightState | undefined
    clock.setTimer(50, () => {
      seen = sight.check()
      state = sight.state
    })
    await clock.jump(TIMINGS.tickMs + TIMINGS.maxLagMs + 1)
    expect(seen, 'one ms more').to.be.false
    expect(state).to.deep.include({reason: 'paused', blindForMs: TIMINGS.maxLagMs + 1})
    stop.abort()
  })

  it('failed requests older than the window are forgotten: five failures, each alone in its window, blind nothing', async () => {
    const {clock, sight, states, stop} = setup(PRODUCTION)
    await clock.advance(0)
    for (let i = 0; i < 5; i++) {
      sight.reportRequest(false, 'slow')
      await clock.advance(10_001)
    }
    expect(sight.check()).to.be.true
    expect(states.map((s) => s.reason)).to.deep.equal([undefined])
    stop.abort()
  })

  it('run() lasts until aborted', async () => {
    const {clock, stop, running} = setup()
    let ended = false
    void running.then(() => (ended = true))
    await clock.advance(5_000)
    expect(ended).to.be.false
    stop.abort()
    await clock.advance(0)
    expect(ended).to.be.true
  })

  it('a tick late by less than maxLagMs is no pause (production timings: a tick of 1 s, 4.5 s late)', async () => {
    const {clock, sight, states, stop} = setup(PRODUCTION)
    await clock.advance(0)
    await clock.jump(5_500)
    expect(sight.check()).to.be.true
    expect(states.map((s) => s.reason)).to.deep.equal([undefined])
    stop.abort()
  })

  it('failed probes are blind time from the last good answer, not from the first probe', async () => {
    const {clock, probe, sight, stop} = setup(PRODUCTION)
    await clock.advance(5_000)
    probe.mode = 'fail'
    await clock.advance(15_000)
    expect(sight.check()).to.be.false
    expect(sight.state.blindForMs, 'since the answer at 5 s').to.equal(15_000)
    stop.abort()
  })

  it('a probe sent the very instant the requests failed together ends their blindness', async () => {
    const clock = new FakeClock()
    const probe = new ScriptedProbe()
    const sight = new Sight({clock, logger: new FakeLogger(), probe: probe.probe, ...PRODUCTION})
    // Scheduled before the probe loop's own timer for 5 s: the failures are heard first, then the probe goes out.
    clock.setTimer(5_000, () => {
      for (let i = 0; i < 5; i++) sight.reportRequest(false, 'no answer')
    })
    const stop = new AbortController()
    void sight.run(stop.signal)
    await clock.advance(5_000)
    expect(sight.check()).to.be.true
    stop.abort()
  })

  it('a probe sent before the pause and answered within its deadline after it does not end the pause either', async () => {
    // A probe deadline longer than the pause, so the answer is taken (not timed out).
    const {clock, probe, sight, stop} = setup({probeIntervalMs: 1000, probeTimeoutMs: 10_000, tickMs: 100, maxLagMs: 1000})
    await clock.advance(0)
    probe.mode = 'manual'
    await clock.advance(1000)
    expect(probe.calls).to.have.length(1)
    await clock.jump(5000)
    expect(probe.calls[0]!.signal.aborted).to.be.false
    probe.calls[0]!.resolve()
    await clock.advance(0)
    expect(sight.state.reason).to.equal('paused')
    stop.abort()
  })

  it('requests failing together: exactly half of the answers failed is enough; the sight says so at once, without the last detail when none was given, blind since the last good probe', async () => {
    const {clock, sight, states, stop} = setup(PRODUCTION)
    await clock.advance(2_000)
    for (let i = 0; i < 5; i++) sight.reportRequest(true)
    for (let i = 0; i < 5; i++) sight.reportRequest(false)
    // Heard by the listener at once, before any check() or tick.
    expect(states.map((s) => s.reason)).to.deep.equal([undefined, 'api-unanswered'])
    expect(states.at(-1)).to.deep.equal({reason: 'api-unanswered', detail: '5 of 10 requests failed within 10000 ms', blindForMs: 0})
    stop.abort()
    const second = setup(PRODUCTION)
    await second.clock.advance(2_000)
    for (let i = 0; i < 5; i++) second.sight.reportRequest(false)
    expect(second.sight.state.blindForMs, 'no request ever answered: since the probe at 0 s').to.equal(2_000)
    second.stop.abort()
  })

  it('a stall is blind time from the last answer, wherever that lies', async () => {
    const {clock, probe, sight, stop} = setup(PRODUCTION)
    await clock.advance(5_000)
    probe.mode = 'manual'
    await clock.advance(10_000)
    expect(sight.check()).to.be.false
    expect(sight.state).to.deep.equal({reason: 'api-unanswered', detail: "no answer from the API for 10000 ms (a poollet's request deadline is 10000 ms)", blindForMs: 10_000})
    stop.abort()
  })
})
