/**
 * A clock whose time moves only when a test says so. Timers fire in deadline order as time is advanced;
 * advance() also lets pending promise callbacks run between timers, so code awaiting sleep() proceeds.
 * advance() moves both readings; stepWall() moves the wall clock alone, as an NTP step or a VM resume
 * does, and fires no timer.
 */
import type {Cancel, Clock} from '../../src/core/clock.ts'

interface Timer {
  at: number
  seq: number
  fn: () => void
}

export class FakeClock implements Clock {
  private time = 0
  private wallOffset: number
  private seq = 0
  private timers: Timer[] = []

  /** start: the wall clock's reading at the beginning (the monotonic reading starts at 0). */
  constructor(start = Date.parse('2026-01-01T00:00:00Z')) {
    this.wallOffset = start
  }

  monotonic(): number {
    return this.time
  }

  wall(): number {
    return this.time + this.wallOffset
  }

  /** Steps the wall clock by ms (negative: backwards); monotonic time and timers are untouched. */
  stepWall(ms: number): void {
    this.wallOffset += ms
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

  /** The monotonic time of the next timer, if any. */
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

  /**
   * Moves time forward by ms in one jump, as a paused process sees it: every due timer fires only
   * after the jump, at the end time, in deadline order.
   */
  async jump(ms: number): Promise<void> {
    this.time += ms
    await this.advance(0)
  }
}

/** Lets every already-queued promise callback (and the ones they queue, a few levels deep) run. */
export async function flushPromises(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve()
  await new Promise<void>((resolve) => setImmediate(resolve))
}
