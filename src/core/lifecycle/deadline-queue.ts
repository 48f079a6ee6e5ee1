/**
 * Many deadlines, one timer. Each key (a pool name) has at most one deadline; a single Clock timer is
 * armed for the earliest. When it fires, every key that is due is handed over in one batch, so a
 * burst of pools falling due together is judged together (the unhealthy-pool breaker needs that).
 *
 * Accuracy: the timer is armed for the exact earliest deadline, so a key is handed over as soon as
 * the clock's timer fires (target: well within a second). Cost: a deadline moved later (a healthy
 * pool's renewal, every event) is only written down: the heap keeps the earlier one until it comes
 * up, and is moved then, once, to where the key's deadline is by that time. A pool renewed every 10 s
 * with a 50 s grace is moved in the heap about once a grace period instead of at every renewal: at
 * 100,000 pools a renewal's sift through 17 levels (a Map write per level) was a tenth of the
 * controller's CPU (bench:scale's profile, issue 27). Set earlier, insert and delete are O(log n).
 */
import type {Cancel, Clock} from '../clock.ts'
import {KeyedMinHeap} from './keyed-min-heap.ts'

/** Node's timers overflow past 2^31-1 ms and fire at once; a longer wait is done in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1

export class DeadlineQueue<K = string> {
  /** Ordered by each key's deadline as of its last move: never later than its deadline. */
  private readonly heap = new KeyedMinHeap<K>()
  /** The deadlines moved later than the heap has them, not moved in it yet. */
  private readonly later = new Map<K, number>()
  private armed: {at: number; cancel: Cancel} | undefined
  private suspended = false
  private readonly clock: Clock
  private readonly onDue: (keys: K[]) => void

  /** onDue is called with every key whose deadline has passed, each removed from the queue first. */
  constructor(clock: Clock, onDue: (keys: K[]) => void) {
    this.clock = clock
    this.onDue = onDue
  }

  get size(): number {
    return this.heap.size
  }

  has(key: K): boolean {
    return this.heap.has(key)
  }

  /** The key's deadline (clock milliseconds), or undefined. */
  get(key: K): number | undefined {
    return this.later.get(key) ?? this.heap.get(key)
  }

  /** When the one timer is armed for, or undefined when none is armed (introspection for tests). */
  get armedAt(): number | undefined {
    return this.armed?.at
  }

  /** Sets or moves the key's deadline. */
  set(key: K, at: number): void {
    const ordered = this.heap.get(key)
    if (ordered !== undefined && at > ordered) {
      this.later.set(key, at)
      return
    }
    this.later.delete(key)
    this.heap.set(key, at)
    this.rearm()
  }

  delete(key: K): boolean {
    this.later.delete(key)
    const removed = this.heap.delete(key)
    if (removed) this.rearm()
    return removed
  }

  /** Keeps every deadline but fires none until resume(): the clock it is kept on stands still meanwhile. */
  suspend(): void {
    this.suspended = true
    this.disarm()
  }

  resume(): void {
    if (!this.suspended) return
    this.suspended = false
    this.rearm()
  }

  /** Drops every deadline and the timer. */
  clear(): void {
    this.heap.clear()
    this.later.clear()
    this.disarm()
  }

  /**
   * Arms for the earliest deadline in the heap when nothing is armed or it moved earlier. A deadline
   * moved later leaves the armed timer alone: it fires early, moves what was put off, finds nothing
   * due and re-arms, which is cheaper than cancelling and re-arming on every renewal of the earliest pool.
   */
  private rearm(): void {
    const earliest = this.heap.peekPriority()
    if (earliest === undefined || this.suspended) {
      this.disarm()
      return
    }
    if (this.armed !== undefined && this.armed.at <= earliest) return
    this.disarm()
    const wait = Math.min(Math.max(0, earliest - this.clock.monotonic()), MAX_TIMER_MS)
    const cancel = this.clock.setTimer(wait, () => this.fire())
    this.armed = {at: earliest, cancel}
  }

  private disarm(): void {
    this.armed?.cancel()
    this.armed = undefined
  }

  private fire(): void {
    this.armed = undefined
    const now = this.clock.monotonic()
    const due: K[] = []
    for (;;) {
      const at = this.heap.peekPriority()
      if (at === undefined || at > now) break
      const key = this.heap.peekKey() as K
      const later = this.later.get(key)
      if (later !== undefined) {
        // Its deadline moved since: moved in the heap now, and looked at again if that is due too.
        this.later.delete(key)
        this.heap.set(key, later)
        continue
      }
      this.heap.pop()
      due.push(key)
    }
    this.rearm()
    if (due.length > 0) this.onDue(due)
  }
}
