import {expect} from 'chai'
import {DEFAULT_JITTER_FACTOR, jittered, nextSlotWait, runEvery} from '../../../src/core/run-every.ts'
import {FakeClock, flushPromises} from '../../support/fake-clock.ts'

const INTERVAL = 10_000

/** A step that records when it starts and can be held open until the test releases it. */
class Steps {
  readonly starts: number[] = []
  running = 0
  maxRunning = 0
  private release: (() => void) | undefined
  private readonly clock: FakeClock
  private readonly hold: boolean
  constructor(clock: FakeClock, hold = false) {
    this.clock = clock
    this.hold = hold
  }
  readonly step = async (): Promise<void> => {
    this.starts.push(this.clock.monotonic())
    this.running++
    this.maxRunning = Math.max(this.maxRunning, this.running)
    if (this.hold) await new Promise<void>((resolve) => (this.release = resolve))
    this.running--
  }
  finish(): void {
    this.release?.()
    this.release = undefined
  }
}

describe('runEvery', () => {
  let clock: FakeClock
  let controller: AbortController
  beforeEach(() => {
    clock = new FakeClock()
    controller = new AbortController()
  })
  afterEach(() => controller.abort())

  it('runs the first step at once', async () => {
    const steps = new Steps(clock)
    const done = runEvery(steps.step, {clock, intervalMs: INTERVAL, signal: controller.signal, onError: () => {}, random: () => 0})
    await flushPromises()
    expect(steps.starts).to.deep.equal([clock.monotonic()])
    controller.abort()
    await done
  })

  it('waits exactly the interval when the random source gives 0 (the minimum)', async () => {
    const steps = new Steps(clock)
    const t0 = clock.monotonic()
    const done = runEvery(steps.step, {clock, intervalMs: INTERVAL, signal: controller.signal, onError: () => {}, random: () => 0})
    await clock.advance(INTERVAL - 1)
    expect(steps.starts).to.have.length(1)
    await clock.advance(1)
    expect(steps.starts).to.deep.equal([t0, t0 + INTERVAL])
    controller.abort()
    await done
  })

  it('waits at most interval * (1 + 4 %) when the random source gives its maximum', async () => {
    const steps = new Steps(clock)
    const t0 = clock.monotonic()
    const almostOne = 1 - Number.EPSILON
    const done = runEvery(steps.step, {clock, intervalMs: INTERVAL, signal: controller.signal, onError: () => {}, random: () => almostOne})
    await clock.advance(INTERVAL * 1.04)
    expect(steps.starts).to.have.length(2)
    const waited = (steps.starts[1] ?? 0) - t0
    expect(waited).to.be.greaterThan(INTERVAL * 1.039).and.at.most(INTERVAL * 1.04)
    controller.abort()
    await done
  })

  it('jittered() stays within [interval, interval * (1 + factor)) and uses the factor given', () => {
    expect(DEFAULT_JITTER_FACTOR).to.equal(0.04)
    expect(jittered(1000, 0.04, () => 0)).to.equal(1000)
    expect(jittered(1000, 0.04, () => 0.5)).to.equal(1020)
    expect(jittered(1000, 0.5, () => 0.5)).to.equal(1250)
    expect(jittered(1000, 0, () => 0.9)).to.equal(1000)
  })

  it('a slow step delays the next, and steps never overlap', async () => {
    const steps = new Steps(clock, true)
    const t0 = clock.monotonic()
    const done = runEvery(steps.step, {clock, intervalMs: INTERVAL, signal: controller.signal, onError: () => {}, random: () => 0})
    // The first step takes 25 s, far beyond the interval: no second step starts meanwhile.
    await clock.advance(25_000)
    expect(steps.starts).to.have.length(1)
    steps.finish()
    await clock.advance(INTERVAL - 1)
    expect(steps.starts).to.have.length(1)
    await clock.advance(1)
    expect(steps.starts).to.deep.equal([t0, t0 + 25_000 + INTERVAL])
    expect(steps.maxRunning).to.equal(1)
    controller.abort()
    steps.finish()
    await done
  })

  it('with a fixed cadence, a step that overran its slot is followed at the next slot of its phase, not an interval after it ended', async () => {
    const steps = new Steps(clock, true)
    const t0 = clock.monotonic()
    const done = runEvery(steps.step, {clock, intervalMs: INTERVAL, signal: controller.signal, onError: () => {}, random: () => 0, sliding: false})
    // The first step takes 25 s: the slots at 10 s and 20 s are gone, the next is at 30 s.
    await clock.advance(25_000)
    steps.finish()
    await clock.advance(4_999)
    expect(steps.starts).to.have.length(1)
    await clock.advance(1)
    expect(steps.starts).to.deep.equal([t0, t0 + 30_000])
    // A quick step keeps the cadence from its start.
    steps.finish()
    await clock.advance(INTERVAL)
    expect(steps.starts).to.deep.equal([t0, t0 + 30_000, t0 + 40_000])
    expect(steps.maxRunning).to.equal(1)
    controller.abort()
    steps.finish()
    await done
  })

  it('nextSlotWait keeps the phase of the step that started the slots', () => {
    expect(nextSlotWait(0, 3_000, 10_000, 10_000)).to.equal(7_000)
    expect(nextSlotWait(0, 10_000, 10_000, 10_000)).to.equal(0)
    expect(nextSlotWait(0, 10_001, 10_000, 10_000)).to.equal(9_999)
    expect(nextSlotWait(0, 25_000, 10_400, 10_000)).to.equal(5_400)
  })

  it("passes a step's error to onError and goes on", async () => {
    const errors: unknown[] = []
    let calls = 0
    const failing = () => {
      calls++
      return calls === 1 ? Promise.reject(new Error('boom')) : Promise.resolve()
    }
    const done = runEvery(failing, {clock, intervalMs: INTERVAL, signal: controller.signal, onError: (e) => errors.push(e), random: () => 0})
    await clock.advance(INTERVAL)
    expect(errors.map((e) => (e as Error).message)).to.deep.equal(['boom'])
    expect(calls).to.equal(2)
    controller.abort()
    await done
  })

  it('goes on when onError itself throws', async () => {
    let calls = 0
    const failing = () => {
      calls++
      return Promise.reject(new Error('boom'))
    }
    const onError = () => {
      throw new Error('reporter broke')
    }
    const done = runEvery(failing, {clock, intervalMs: INTERVAL, signal: controller.signal, onError, random: () => 0})
    await clock.advance(2 * INTERVAL)
    expect(calls).to.equal(3)
    controller.abort()
    await done
  })

  it('abort during the wait stops at once and leaves no timer behind', async () => {
    const steps = new Steps(clock)
    const done = runEvery(steps.step, {clock, intervalMs: INTERVAL, signal: controller.signal, onError: () => {}, random: () => 0})
    await clock.advance(1)
    expect(clock.pending).to.equal(1)
    controller.abort()
    await done
    expect(clock.pending).to.equal(0)
    await clock.advance(10 * INTERVAL)
    expect(steps.starts).to.have.length(1)
  })

  it('abort during a step resolves when that step finishes, and reports no error for it', async () => {
    const steps = new Steps(clock, true)
    const errors: unknown[] = []
    let resolved = false
    const done = runEvery(steps.step, {clock, intervalMs: INTERVAL, signal: controller.signal, onError: (e) => errors.push(e), random: () => 0})
    void done.then(() => (resolved = true))
    await flushPromises()
    controller.abort()
    await flushPromises()
    expect(resolved, 'resolved while the step was still running').to.be.false
    steps.finish()
    await done
    expect(clock.pending).to.equal(0)
    expect(steps.starts).to.have.length(1)
    expect(errors).to.deep.equal([])
  })

  it('an error thrown because of the abort is not reported', async () => {
    const errors: unknown[] = []
    const step = (signal: AbortSignal) =>
      new Promise<void>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), {once: true}))
    const done = runEvery(step, {clock, intervalMs: INTERVAL, signal: controller.signal, onError: (e) => errors.push(e)})
    await flushPromises()
    controller.abort()
    await done
    expect(errors).to.deep.equal([])
  })

  it('does not start when the signal is already aborted', async () => {
    const steps = new Steps(clock)
    controller.abort()
    await runEvery(steps.step, {clock, intervalMs: INTERVAL, signal: controller.signal, onError: () => {}})
    expect(steps.starts).to.deep.equal([])
    expect(clock.pending).to.equal(0)
  })
})
