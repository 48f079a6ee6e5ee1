/**
 * The simulator's judge: it knows the truth (which poollet is alive, what the API committed and when,
 * whose requests were spoilt on their own link) and checks the two promises and the engine's bookkeeping.
 *
 * (S) No live pool marked. A mark that lands at t on a pool whose poollet was neither dead nor paused
 *     in [t − G, t] is a false Unknown, unless every request that poollet sent in that window was
 *     spoilt on its own link (its node was cut off: Unknown is then the truth). Trouble of the API as a
 *     whole (stalls, refused writes, slowness) excuses nothing: the controller must see it.
 * (L) Every dead pool marked within its bound: by the instant at which the time since its death,
 *     minus the time impaired by faults that blind a controller (each fault's interval and what
 *     follows it, impairedUntil()), reaches G + slack. The pool's own failing writes impair it alone.
 * (I) After every instant: no overdue, unmarked pool of a leading engine without a next step
 *     (PoolLifecycle.strandedPools()).
 * (R) Every mark that landed is reported (logged, Evented, counted) once, by the replica that wrote it.
 */
import {READY_CONDITION} from '../src/core/pool-kinds.ts'
import type {Fault, PartyRef} from './faults.ts'
import type {WatchEvent} from './sim-api.ts'
import type {Scenario} from './schedule.ts'

/** The poollets' heartbeat interval and request deadline: a settle window is one of each. */
const SETTLE_MS = 20_000
/** Leadership passes within a lease duration and a few retries: 15 s + 2 × 2.2 s, rounded up. */
const TAKEOVER_MS = 20_000

/**
 * When a fault stops impairing a controller, as the design promises: API-wide trouble, once its
 * settle window (one heartbeat interval plus one request deadline) has passed, and 10 s for the
 * first look; trouble in which events may have been missed (a relist, a pause of the process, a
 * restart), a whole grace period later, since every grace period starts afresh.
 */
export function impairedUntil(f: Fault, gracePeriodMs: number): number {
  switch (f.class) {
    case 'stall':
    case 'refuse-writes':
    case 'slow':
    case 'loss':
      return f.end + SETTLE_MS + 10_000
    case 'watch-gap':
      return f.end + (f.relist ? gracePeriodMs : 0) + 10_000
    case 'watch-lag':
      return f.end + f.lagMs + 10_000
    case 'watch-silence':
      return f.end + 10_000
    case 'controller-pause':
      return f.end + TAKEOVER_MS + gracePeriodMs + 10_000
    case 'controller-restart':
      return Math.max(f.end, f.start + TAKEOVER_MS) + gracePeriodMs + 10_000
    case 'write-fail':
      return f.end + SETTLE_MS + 10_000
    case 'poollet-pause':
      return f.end
  }
}

/** Confirm, queue, write, and a retry: added to the grace period in the bound. */
export const BOUND_SLACK_MS = 30_000

const IMPAIRS_CONTROLLER = new Set<Fault['class']>(['stall', 'refuse-writes', 'slow', 'watch-gap', 'watch-lag', 'watch-silence', 'controller-pause', 'controller-restart'])

export interface FalseUnknown {
  pool: number
  at: number
}
export interface DeadPool {
  pool: number
  diedAt: number
  boundAt: number
  markedAt?: number
}
export interface Stranded {
  pool: string
  at: number
  replica: number
}

type Interval = [number, number]

export class Oracle {
  private readonly scenario: Scenario
  private readonly g: number
  private readonly poolIndex: (name: string) => number | undefined
  readonly falseUnknowns: FalseUnknown[] = []
  readonly dead: DeadPool[] = []
  readonly stranded: Stranded[] = []
  private readonly strandedSeen = new Set<string>()
  /** Per pool: the lease requests its poollet sent (time, spoilt on its own link). */
  private readonly sent = new Map<number, {at: number; spoilt: boolean}[]>()
  private readonly status = new Map<string, string | undefined>()
  /** Per pool: marks that landed, by replica. */
  readonly landed = new Map<string, number>()
  readonly reported = new Map<string, number>()
  readonly evented = new Map<string, number>()
  marks = 0
  private readonly killedAt = new Map<number, number>()
  private readonly pauses: Map<number, Interval[]>
  private readonly impaired: Interval[]

  private readonly names: (pool: number) => string

  constructor(scenario: Scenario, gracePeriodMs: number, poolIndex: (name: string) => number | undefined, names: (pool: number) => string) {
    this.names = names
    this.scenario = scenario
    this.g = gracePeriodMs
    this.poolIndex = poolIndex
    this.pauses = new Map()
    for (const f of scenario.faults) if (f.class === 'poollet-pause') this.pauses.set(f.pool, [...(this.pauses.get(f.pool) ?? []), [f.start, f.end]])
    this.impaired = merge(scenario.faults.filter((f) => impairsController(f)).map((f) => [f.start, impairedUntil(f, gracePeriodMs)]))
  }

  died(pool: number, at: number): void {
    this.killedAt.set(pool, at)
    const own = merge([
      ...this.impaired,
      ...this.scenario.faults.filter((f) => f.class === 'write-fail' && f.pool === pool).map((f): Interval => [f.start, impairedUntil(f, this.g)]),
    ])
    const dead: DeadPool = {pool, diedAt: at, boundAt: clearBy(own, at, this.g + BOUND_SLACK_MS)}
    // Already Unknown (its poollet was paused or cut off before it died): nothing left to mark.
    if (this.status.get(this.names(pool)) === 'Unknown') dead.markedAt = at
    this.dead.push(dead)
  }

  requestSent(by: PartyRef, op: string, at: number, outcome: string): void {
    if (by.role !== 'poollet' || !op.includes('lease')) return
    const log = this.sent.get(by.index) ?? []
    log.push({at, spoilt: outcome !== 'ok'})
    // Only the last grace period (and some) is ever asked about.
    while (log.length > 0 && log[0]!.at < at - 2 * this.g) log.shift()
    this.sent.set(by.index, log)
  }

  committed(event: WatchEvent, by: PartyRef, at: number): void {
    if (event.resource !== 'pools') return
    const pool = event.object
    const name = pool.metadata.name
    const before = this.status.get(name)
    const now = event.type === 'delete' ? undefined : pool.status?.conditions?.find((c) => c.type === READY_CONDITION)?.status
    this.status.set(name, now)
    if (now !== 'Unknown' || before === 'Unknown' || by.role !== 'controller') return
    this.marks++
    this.landed.set(name, (this.landed.get(name) ?? 0) + 1)
    const index = this.poolIndex(name)
    if (index === undefined) return
    const killed = this.killedAt.get(index)
    if (killed !== undefined && killed <= at) {
      for (const d of this.dead) if (d.pool === index && d.markedAt === undefined) d.markedAt = at
      return
    }
    if (this.excused(index, at)) return
    this.falseUnknowns.push({pool: index, at})
  }

  /** Whether a mark at t of a live pool is the truth: its poollet was paused, or cut off from the API entirely. */
  private excused(pool: number, t: number): boolean {
    if ((this.pauses.get(pool) ?? []).some(([s, e]) => s < t && e > t - this.g)) return true
    const window = (this.sent.get(pool) ?? []).filter((r) => r.at >= t - this.g && r.at <= t)
    return window.length > 0 && window.every((r) => r.spoilt)
  }

  /** A Ready=Unknown mark reported by a replica (its log, Event and counter go together). */
  markReported(pool: string): void {
    this.reported.set(pool, (this.reported.get(pool) ?? 0) + 1)
  }

  markEvented(pool: string): void {
    this.evented.set(pool, (this.evented.get(pool) ?? 0) + 1)
  }

  strandedAt(pools: string[], at: number, replica: number): void {
    for (const pool of pools) {
      if (this.strandedSeen.has(pool)) continue
      this.strandedSeen.add(pool)
      this.stranded.push({pool, at, replica})
    }
  }

  /** Dead pools whose bound passed unmarked, at the end of a run of the given length. */
  late(endMs: number): DeadPool[] {
    return this.dead.filter((d) => d.boundAt <= endMs && (d.markedAt === undefined || d.markedAt > d.boundAt))
  }

  /** Pools whose landed marks and reports differ. */
  misreported(): {pool: string; landed: number; reported: number; evented: number}[] {
    const names = new Set([...this.landed.keys(), ...this.reported.keys(), ...this.evented.keys()])
    const out = []
    for (const pool of names) {
      const landed = this.landed.get(pool) ?? 0
      const reported = this.reported.get(pool) ?? 0
      const evented = this.evented.get(pool) ?? 0
      if (reported > landed || evented !== reported) out.push({pool, landed, reported, evented})
    }
    return out
  }
}

function impairsController(f: Fault): boolean {
  if (f.class === 'loss') return f.target === 'controllers' || (typeof f.target === 'object' && f.target.role === 'controller')
  return IMPAIRS_CONTROLLER.has(f.class)
}

/** Sorted, disjoint intervals covering the same time. */
function merge(intervals: Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0])
  const out: Interval[] = []
  for (const [s, e] of sorted) {
    const last = out.at(-1)
    if (last !== undefined && s <= last[1]) last[1] = Math.max(last[1], e)
    else out.push([s, e])
  }
  return out
}

/** The first instant after `from` by which `need` ms outside the (merged) intervals have passed. */
export function clearBy(intervals: Interval[], from: number, need: number): number {
  let t = from
  let left = need
  for (const [s, e] of intervals) {
    if (e <= t) continue
    if (s > t) {
      if (s - t >= left) return t + left
      left -= s - t
    }
    t = Math.max(t, e)
  }
  return t + left
}
