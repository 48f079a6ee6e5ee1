/**
 * A clock whose time moves only when a test says so. Timers fire in deadline order as time is advanced;
 * advance() also lets pending promise callbacks run between timers, so code awaiting sleep() proceeds.
 */
import type {Cancel, Clock} from '../../src/core/clock.ts'

interface Timer {
  at: number
  seq: number
  fn: () => void
}

export class FakeClock implements Clock {
  private time: number
  private seq = 0
  private timers: Timer[] = []

  constructor(start = Date.parse('2026-01-01T00:00:00Z')) {
    this.time = start
  }

  now(): number {
    return this.time
  }

  setTimer(ms: number, fn: () => void): Cancel {
    const timer: Timer = {at: this.time + Math.max(0, ms), seq: this.seq++, fn}
    this.timers.push(timer)
    return () => {
      this.timers = this.timers.filter((t) => t !== timer)
    }
  }

  /** Number of timers waiting to fire. */
  get pending(): number {
    return this.timers.length
  }

  /** The time of the next timer, if any. */
  nextTimerAt(): number | undefined {
    return this.timers.reduce<number | undefined>((min, t) => (min === undefined || t.at < min ? t.at : min), undefined)
  }

  /** Moves time forward by ms, firing every timer that falls due, in order, letting promises settle between them. */
  async advance(ms: number): Promise<void> {
    const target = this.time + ms
    await flushPromises()
    for (;;) {
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0]
      if (due === undefined) break
      this.timers = this.timers.filter((t) => t !== due)
      this.time = Math.max(this.time, due.at)
      due.fn()
      await flushPromises()
    }
    this.time = target
    await flushPromises()
  }
}

/** Lets every already-queued promise callback (and the ones they queue, a few levels deep) run. */
export async function flushPromises(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve()
  await new Promise<void>((resolve) => setImmediate(resolve))
}
