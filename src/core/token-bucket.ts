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

/**
 * The rules of a `--qps`/`--burst` pair, client-go's: qps a number > 0 as typed (e.g. 20 or 2.5),
 * burst an integer >= 1. Each error names its flag (the names the caller's command uses).
 */
export function parseRateFlags(input: {qps: string; burst: number}, names: {qps: string; burst: string}): {qps: number; burst: number; errors: string[]} {
  const errors: string[] = []
  const qps = /^\s*\d+(\.\d+)?\s*$/.test(input.qps) ? Number(input.qps) : Number.NaN
  if (!(qps > 0)) errors.push(`${names.qps} ${JSON.stringify(input.qps)} must be a number > 0 (requests per second)`)
  if (!(Number.isSafeInteger(input.burst) && input.burst >= 1)) errors.push(`${names.burst} ${input.burst} must be an integer >= 1`)
  return {qps, burst: input.burst, errors}
}
