/**
 * client-go's client-side rate limit (`--qps`, `--burst`): a token bucket of `burst` tokens refilled at
 * `qps` per second. reserve() takes a token and says how long to wait before using it (0 when one was
 * there), so that callers queue in order without polling; on the monotonic clock.
 */
import type {Clock} from './clock.ts'

export class TokenBucket {
  private tokens: number
  private at: number
  private readonly qps: number
  private readonly burst: number
  private readonly clock: Clock

  constructor(qps: number, burst: number, clock: Clock) {
    this.qps = qps
    this.burst = burst
    this.clock = clock
    this.tokens = burst
    this.at = clock.monotonic()
  }

  /** Takes one token; resolves to the milliseconds to wait before the request may go. */
  reserve(): number {
    this.refill()
    this.tokens -= 1
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000
  }

  /** Takes a token when one is there now; false (and nothing taken) when there is none. */
  tryTake(): boolean {
    this.refill()
    if (this.tokens < 1) return false
    this.tokens -= 1
    return true
  }

  private refill(): void {
    const now = this.clock.monotonic()
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) / 1000) * this.qps)
    this.at = now
  }
}
