/**
 * The clock on which a pool's silence is measured: the controller's monotonic clock with every blind
 * spell cut out. While the view is not whole it stands still (blind time is not silence), and when the
 * view is whole again it runs on from where it stopped, so every deadline kept on it has moved by the
 * spell's length without being touched: an O(1) epoch offset, whatever the number of pools.
 *
 * A spell seen late (a pause is seen only once it is over; a run of failed probes only at its third)
 * is cut out from when it began: the clock steps back to that instant. It never steps back past the
 * end of the previous spell.
 */
import type {Cancel, Clock} from '../../clock.ts'

export class EvidenceClock implements Clock {
  private readonly real: Clock
  /** Blind time cut out so far. */
  private offset = 0
  /** Real time the current spell began; undefined while the view is whole. */
  private stoppedAt: number | undefined
  private resumedAt = Number.NEGATIVE_INFINITY

  /** Starts stopped: nothing is evidence before the view has been whole. */
  constructor(real: Clock) {
    this.real = real
    this.stoppedAt = real.monotonic()
  }

  get running(): boolean {
    return this.stoppedAt === undefined
  }

  monotonic(): number {
    return (this.stoppedAt ?? this.real.monotonic()) - this.offset
  }

  wall(): number {
    return this.real.wall()
  }

  /** Timers run on real time: while the clock runs, the two advance alike. */
  setTimer(ms: number, fn: () => void): Cancel {
    return this.real.setTimer(ms, fn)
  }

  /** Blind: stop, as of sinceMs ago (not before the last resume). */
  stop(sinceMs = 0): void {
    if (this.stoppedAt !== undefined) return
    this.stoppedAt = Math.max(this.resumedAt, this.real.monotonic() - Math.max(0, sinceMs))
  }

  /** Whole again: run on, the spell cut out. */
  resume(): void {
    if (this.stoppedAt === undefined) return
    const now = this.real.monotonic()
    this.offset += now - this.stoppedAt
    this.stoppedAt = undefined
    this.resumedAt = now
  }

  /** Blind time cut out so far, the current spell included (ms): what separates this clock from the real one. */
  get cutOutMs(): number {
    return this.offset + (this.stoppedAt === undefined ? 0 : this.real.monotonic() - this.stoppedAt)
  }

  /** An instant on this clock as real monotonic time (as of now: a spell to come moves it). */
  toReal(at: number): number {
    return at + this.offset + (this.stoppedAt === undefined ? 0 : this.real.monotonic() - this.stoppedAt)
  }
}
