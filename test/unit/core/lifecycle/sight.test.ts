/** The controller's sight: its loop runs on time and the API answers promptly, or it is blind. */
import {expect} from 'chai'
import {Sight, sightTimings, type SightState} from '../../../../src/core/lifecycle/sight.ts'
import {FakeClock} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'

const TIMINGS = {probeIntervalMs: 1000, probeTimeoutMs: 500, tickMs: 100, maxLagMs: 1000}

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

function setup() {
  const clock = new FakeClock()
  const probe = new ScriptedProbe()
  const sight = new Sight({clock, logger: new FakeLogger(), probe: probe.probe, ...TIMINGS})
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

  it('a failed probe is blindness until the next probe succeeds', async () => {
    const {clock, probe, sight, states, stop} = setup()
    await clock.advance(0)
    expect(sight.check()).to.be.true
    probe.mode = 'fail'
    await clock.advance(1000)
    expect(sight.state).to.deep.equal({reason: 'api-unanswered', detail: 'HTTP 503: etcdserver: request timed out'})
    probe.mode = 'auto'
    await clock.advance(1000)
    expect(sight.check()).to.be.true
    expect(states.map((s) => s.reason)).to.deep.equal([undefined, 'api-unanswered', undefined])
    stop.abort()
  })

  it('a probe that hangs is aborted at its timeout and is blindness', async () => {
    const {clock, probe, sight, stop} = setup()
    await clock.advance(0)
    probe.mode = 'manual'
    await clock.advance(1000)
    const hung = probe.calls[0]!
    await clock.advance(499)
    expect(sight.check(), 'an answer may still come').to.be.true
    await clock.advance(1)
    expect(hung.signal.aborted).to.be.true
    expect(sight.state).to.deep.equal({reason: 'api-unanswered', detail: 'no answer within 500 ms'})
    stop.abort()
  })

  it('sees a pause at once, even from a timer that fires before its own tick', async () => {
    const {clock, probe, sight, stop} = setup()
    await clock.advance(0)
    expect(sight.check()).to.be.true
    let seenByDeadline: boolean | undefined
    // A grace deadline due before the next tick: after the pause it fires first.
    clock.setTimer(50, () => (seenByDeadline = sight.check()))
    probe.mode = 'manual'
    await clock.jump(10_000)
    expect(seenByDeadline).to.be.false
    expect(sight.state.reason).to.equal('paused')
    expect(sight.state.detail).to.match(/the event loop ran \d+ ms late/)
    expect(sight.state.blindForMs, 'the pause itself, for the blind time').to.be.at.least(9000)
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

  it('a failure reported by another request is blindness until the next good probe', async () => {
    const {clock, sight, stop} = setup()
    await clock.advance(0)
    sight.reportApiFailure('get lease ironcore-machinepool-lease/p: no answer within 5s')
    expect(sight.check()).to.be.false
    expect(sight.state.detail).to.equal('get lease ironcore-machinepool-lease/p: no answer within 5s')
    await clock.advance(1000)
    expect(sight.check()).to.be.true
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
    expect(sightTimings(50_000)).to.deep.equal({probeIntervalMs: 5000, probeTimeoutMs: 5000, tickMs: 1000, maxLagMs: 5000})
    const short = sightTimings(4000)
    expect(short).to.deep.equal({probeIntervalMs: 400, probeTimeoutMs: 1000, tickMs: 200, maxLagMs: 1000})
    for (const grace of [800, 4000, 50_000, 600_000]) {
      const t = sightTimings(grace)
      expect(t.probeIntervalMs, `grace ${grace}`).to.be.below(grace)
    }
  })
})
