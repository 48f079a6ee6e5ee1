/**
 * The per-zone breaker (`--max-unhealthy` with pools that carry a zone label): Kubernetes' node
 * lifecycle controller judges each zone on its own (unhealthy-zone-threshold): a zone with too many
 * silent pools is held, the others are judged as usual; the fleet-wide breaker is kept beside it. Each
 * zone has its own {@link UnhealthyBreaker} with the same limit, counted over the zone's pools: those
 * that went silent within the breaker's window trip it, those stale and unmarked keep it open. Pools
 * without a zone are judged by the fleet-wide breaker alone. Each update is O(overdue) plus, at most
 * once per refreshMs, O(pools) to count the zones' sizes: a partition of 10k of 100k pools healing
 * updates once per returning pool, and recounting every zone each time would be 10^9 steps.
 */
import {UnhealthyBreaker, type BreakerTransition, type MaxUnhealthy} from './max-unhealthy.ts'

export interface ZoneTransition {
  zone: string
  transition: BreakerTransition
  unhealthy: number
  total: number
}

export class ZoneBreakers {
  private readonly breakers = new Map<string, UnhealthyBreaker>()
  private readonly limit: MaxUnhealthy | undefined
  private readonly zoneOf: (name: string) => string | undefined
  private readonly refreshMs: number
  /** The zones' sizes, and when (the caller's clock) and at what pool count they were counted. */
  private sizes: {at: number; pools: number; totals: Map<string, number>} | undefined

  /** refreshMs: how stale the zones' sizes may be (a pool count that changed recounts at once). */
  constructor(limit: MaxUnhealthy | undefined, zoneOf: (name: string) => string | undefined, refreshMs = 0) {
    this.limit = limit
    this.zoneOf = zoneOf
    this.refreshMs = refreshMs
  }

  /**
   * Recounts every zone: silent (went silent within the window), stale (overdue and unmarked), all
   * (every pool). Returns each zone's change (a zone whose pools are all gone recovers).
   */
  update(silent: Iterable<string>, stale: Iterable<string>, all: {names: () => Iterable<string>; size: number}, now = 0): ZoneTransition[] {
    if (this.limit === undefined) return []
    if (this.sizes === undefined || this.sizes.pools !== all.size || now - this.sizes.at >= this.refreshMs) {
      const totals = new Map<string, number>()
      for (const name of all.names()) {
        const zone = this.zoneOf(name)
        if (zone !== undefined) totals.set(zone, (totals.get(zone) ?? 0) + 1)
      }
      this.sizes = {at: now, pools: all.size, totals}
    }
    const counts = new Map<string, {silent: number; stale: number; total: number}>()
    for (const [zone, total] of this.sizes.totals) counts.set(zone, {silent: 0, stale: 0, total})
    const count = (names: Iterable<string>, field: 'silent' | 'stale') => {
      for (const name of names) {
        const zone = this.zoneOf(name)
        if (zone === undefined) continue
        const c = counts.get(zone) ?? {silent: 0, stale: 0, total: 0}
        c[field]++
        counts.set(zone, c)
      }
    }
    count(silent, 'silent')
    count(stale, 'stale')
    const transitions: ZoneTransition[] = []
    for (const zone of new Set([...counts.keys(), ...this.breakers.keys()])) {
      const c = counts.get(zone) ?? {silent: 0, stale: 0, total: 0}
      let breaker = this.breakers.get(zone)
      if (breaker === undefined) {
        breaker = new UnhealthyBreaker(this.limit)
        this.breakers.set(zone, breaker)
      }
      const transition = breaker.update(c.silent, c.stale, c.total)
      if (transition !== undefined) transitions.push({zone, transition, unhealthy: breaker.unhealthy, total: breaker.total})
      if (c.total === 0 && !breaker.tripped) this.breakers.delete(zone)
    }
    return transitions
  }

  /** Whether the pool's zone is held. */
  holds(name: string): boolean {
    const zone = this.zoneOf(name)
    return zone !== undefined && (this.breakers.get(zone)?.tripped ?? false)
  }

  /** The zone's breaker counts, if it has one. */
  state(zone: string): {tripped: boolean; unhealthy: number; total: number} | undefined {
    const breaker = this.breakers.get(zone)
    return breaker === undefined ? undefined : {tripped: breaker.tripped, unhealthy: breaker.unhealthy, total: breaker.total}
  }

  zoneOfPool(name: string): string | undefined {
    return this.zoneOf(name)
  }

  /** Every zone held now. */
  held(): string[] {
    return [...this.breakers].filter(([, b]) => b.tripped).map(([zone]) => zone)
  }

  /** Forgets every zone (leadership changed). */
  clear(): void {
    this.breakers.clear()
  }
}
