/**
 * The `--max-unhealthy` circuit breaker: when more of a kind's pools would be stale at once than
 * allowed, the likelier story is that the controller (or the network between it and the pools) is at
 * fault, not that the pools all died together; so it marks none and says so, once, until the number
 * falls back.
 *
 * "At once" is a window, not an instant: poollets renew at their own phase, so a partition makes their
 * deadlines fall over a whole heartbeat interval, one pool at a time. The engine therefore holds each
 * newly stale pool for a heartbeat interval before it is judged, so the count is complete when the
 * first of a partitioned fleet would be marked, and counts the pools that went silent within a longer
 * window (a lease duration), marked ones included, so that a fleet whose deadlines spread wider than
 * the hold still trips it once more than the limit went silent. It trips on that count, and stays open while either that count or the pools it
 * holds (stale, not marked) exceed the limit: a partition that lasts keeps it open; pools coming back
 * close it, and the ones still silent are marked then.
 *
 * The price, which is its purpose: a mass death of more than the limit within the window is held, not
 * marked, until enough pools come back; and with the breaker on, every mark waits the hold.
 */

/** A count of pools, or a share of the kind's pools in percent (0–100, decimals allowed). */
export type MaxUnhealthy = {kind: 'count'; count: number} | {kind: 'percent'; percent: number}

export const MAX_UNHEALTHY_FLAG = '--max-unhealthy'

/** Parses `10` or `30%`; throws an Error naming the flag, the rule and the input. */
export function parseMaxUnhealthy(text: string, flag = MAX_UNHEALTHY_FLAG): MaxUnhealthy {
  const value = text.trim()
  const rule = 'a whole number of pools (e.g. 10) or a percentage from 0% to 100% (e.g. 30%)'
  const count = /^\d+$/.exec(value)
  if (count !== null) {
    const n = Number(value)
    if (!Number.isSafeInteger(n)) throw new Error(`${flag} must be ${rule}; ${JSON.stringify(text)} is too large`)
    return {kind: 'count', count: n}
  }
  const percent = /^(\d+(?:\.\d+)?)%$/.exec(value)
  if (percent !== null) {
    const p = Number(percent[1])
    if (p > 100) throw new Error(`${flag} must be ${rule}; ${JSON.stringify(text)} is more than 100%`)
    return {kind: 'percent', percent: p}
  }
  if (/^-/.test(value)) throw new Error(`${flag} must be ${rule}; ${JSON.stringify(text)} is negative`)
  throw new Error(`${flag} must be ${rule}; got ${JSON.stringify(text)}`)
}

export function formatMaxUnhealthy(limit: MaxUnhealthy): string {
  return limit.kind === 'count' ? String(limit.count) : `${limit.percent}%`
}

/** True when unhealthy of total pools is more than the limit allows. No limit: never. */
export function exceedsMaxUnhealthy(limit: MaxUnhealthy | undefined, unhealthy: number, total: number): boolean {
  if (limit === undefined) return false
  // Compared in whole numbers (unhealthy/total > percent/100) so that no rounding decides a trip.
  return limit.kind === 'count' ? unhealthy > limit.count : unhealthy * 100 > limit.percent * total
}

export type BreakerTransition = 'tripped' | 'recovered'

/** Remembers whether the breaker is open, so that each trip and each recovery is reported once. */
export class UnhealthyBreaker {
  private open = false
  private counts = {unhealthy: 0, total: 0}

  readonly limit: MaxUnhealthy | undefined

  constructor(limit: MaxUnhealthy | undefined) {
    this.limit = limit
  }

  get tripped(): boolean {
    return this.open
  }

  /** The counts of the last update. */
  get unhealthy(): number {
    return this.counts.unhealthy
  }

  get total(): number {
    return this.counts.total
  }

  /**
   * Judges the current counts: silentInWindow (pools that went silent within the window, marked ones
   * included) trips it; held (stale pools not marked) keeps it open. Returns the transition when the
   * state changed, else undefined.
   */
  update(silentInWindow: number, held: number, total: number): BreakerTransition | undefined {
    const unhealthy = Math.max(silentInWindow, held)
    this.counts = {unhealthy, total}
    const exceeded = this.open
      ? exceedsMaxUnhealthy(this.limit, unhealthy, total)
      : exceedsMaxUnhealthy(this.limit, silentInWindow, total)
    if (exceeded === this.open) return undefined
    this.open = exceeded
    return exceeded ? 'tripped' : 'recovered'
  }
}
