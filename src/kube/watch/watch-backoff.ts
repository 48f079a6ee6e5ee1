/**
 * The delay before a list+watch cache tries again: exponential, bounded, jittered, and forgotten after a
 * quiet spell, as client-go's backoff manager does. Jitter pulls each delay down by up to `jitter` of
 * itself, so a fleet of controllers restarted together does not reconnect in lockstep and no delay ever
 * exceeds maxMs.
 */
import type {Clock} from '../../core/index.ts'

export interface BackoffOptions {
  /** First delay. Default 200 ms: a dropped connection usually comes back at once. */
  initialMs?: number
  /** Upper bound of any delay. Default 30 s: long enough to spare a struggling API server. */
  maxMs?: number
  /** Fraction of a delay removed at random, 0..1. Default 0.2. */
  jitter?: number
  /** A failure this long after the previous one starts again from initialMs. Default 2 min. */
  resetAfterMs?: number
}

export const BACKOFF_DEFAULTS: Required<BackoffOptions> = {initialMs: 200, maxMs: 30_000, jitter: 0.2, resetAfterMs: 120_000}

export class WatchBackoff {
  private readonly clock: Clock
  private readonly options: Required<BackoffOptions>
  private readonly random: () => number
  private attempt = 0
  private lastFailureAt: number | undefined

  constructor(clock: Clock, options: BackoffOptions = {}, random: () => number = Math.random) {
    this.clock = clock
    this.options = {...BACKOFF_DEFAULTS, ...options}
    this.random = random
  }

  /** Records a failure now and returns how long to wait before the next try. */
  next(): number {
    const now = this.clock.monotonic()
    if (this.lastFailureAt !== undefined && now - this.lastFailureAt >= this.options.resetAfterMs) this.attempt = 0
    this.lastFailureAt = now
    const {initialMs, maxMs, jitter} = this.options
    // Capped exponent: 2 ** 40 already exceeds any sensible maxMs, and keeps the number finite.
    const base = Math.min(maxMs, initialMs * 2 ** Math.min(this.attempt, 40))
    this.attempt++
    return Math.round(base * (1 - jitter * this.random()))
  }
}
