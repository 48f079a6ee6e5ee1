/**
 * The simulator's time: one heap of timers for every party, fired in (time, order) order, with every
 * promise continuation they start run to the end before the next timer fires. Nothing else moves time,
 * so a seed gives the same run on any machine, at any load.
 *
 * Each party (a poollet, a controller replica, the API server) sees it through a {@link PartyClock},
 * which can pause: a paused process runs nothing (its timers and the answers sent to it wait), and on
 * resume it sees the whole jump at once, as a SIGSTOPped or starved process does.
 *
 * FakeClock (test/support) serves unit tests well but scans its timers on every step and flushes with
 * 20 microtask rounds and a setImmediate per timer; this one is O(log n) per timer and drains once per
 * instant, which is what a few hundred seeds a minute need.
 */
import type {Cancel, Clock} from '../src/core/clock.ts'

interface Timer {
  at: number
  seq: number
  fn: () => void
  cancelled: boolean
}

/** A binary min-heap of timers by (at, seq). */
class TimerHeap {
  private readonly items: Timer[] = []

  get size(): number {
    return this.items.length
  }

  peek(): Timer | undefined {
    return this.items[0]
  }

  push(timer: Timer): void {
    const items = this.items
    items.push(timer)
    let i = items.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(items[i]!, items[parent]!)) break
      ;[items[i], items[parent]] = [items[parent]!, items[i]!]
      i = parent
    }
  }

  pop(): Timer | undefined {
    const items = this.items
    const top = items[0]
    const last = items.pop()
    if (top === undefined || last === undefined || items.length === 0) return top
    items[0] = last
    let i = 0
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let min = i
      if (l < items.length && before(items[l]!, items[min]!)) min = l
      if (r < items.length && before(items[r]!, items[min]!)) min = r
      if (min === i) break
      ;[items[i], items[min]] = [items[min]!, items[i]!]
      i = min
    }
    return top
  }
}

const before = (a: Timer, b: Timer) => a.at < b.at || (a.at === b.at && a.seq < b.seq)

/** Lets every queued promise continuation run, and those they queue, before returning. */
const drain = () => new Promise<void>((resolve) => setImmediate(resolve))

export class SimClock {
  private time = 0
  private seq = 0
  private readonly heap = new TimerHeap()
  private readonly wallStart: number

  constructor(wallStart = Date.parse('2026-01-01T00:00:00Z')) {
    this.wallStart = wallStart
  }

  now(): number {
    return this.time
  }

  wall(): number {
    return this.wallStart + this.time
  }

  /** Calls fn at the absolute simulated time at (or now, if at has passed). */
  at(at: number, fn: () => void): Cancel {
    const timer: Timer = {at: Math.max(at, this.time), seq: this.seq++, fn, cancelled: false}
    this.heap.push(timer)
    return () => {
      timer.cancelled = true
    }
  }

  /** Fires every timer up to and including `until`, in order; time ends at `until`. */
  async runUntil(until: number, afterInstant?: () => void): Promise<void> {
    await drain()
    for (;;) {
      const next = this.heap.peek()
      if (next === undefined || next.at > until) break
      this.time = next.at
      // Every timer of this instant, then the continuations they started, then the check.
      while (this.heap.peek() !== undefined && this.heap.peek()!.at === this.time) {
        const timer = this.heap.pop()!
        if (!timer.cancelled) timer.fn()
      }
      await drain()
      afterInstant?.()
    }
    this.time = until
  }
}

/**
 * One party's clock. While paused, nothing of the party runs: a timer or an answer due meanwhile is
 * held until the pause ends, then all run in their order. A dead party runs nothing ever again.
 */
export class PartyClock implements Clock {
  private readonly sim: SimClock
  private pausedUntil = 0
  private dead = false

  constructor(sim: SimClock) {
    this.sim = sim
  }

  monotonic(): number {
    return this.sim.now()
  }

  wall(): number {
    return this.sim.wall()
  }

  setTimer(ms: number, fn: () => void): Cancel {
    let cancelled = false
    let cancelInner: Cancel = () => {}
    const cancelOuter = this.sim.at(this.sim.now() + Math.max(0, ms), () => {
      cancelInner = this.run(() => {
        if (!cancelled) fn()
      })
    })
    return () => {
      cancelled = true
      cancelOuter()
      cancelInner()
    }
  }

  /** Runs fn now, or when the pause ends; never once dead. Returns a cancel for a deferred run. */
  run(fn: () => void): Cancel {
    if (this.dead) return () => {}
    if (this.sim.now() < this.pausedUntil) return this.sim.at(this.pausedUntil, () => this.run(fn))
    fn()
    return () => {}
  }

  /** Nothing of the party runs until `until` (absolute simulated time). */
  pause(until: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, until)
  }

  get paused(): boolean {
    return this.sim.now() < this.pausedUntil
  }

  kill(): void {
    this.dead = true
  }

  get alive(): boolean {
    return !this.dead
  }
}
