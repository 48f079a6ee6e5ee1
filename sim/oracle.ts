/**
 * The simulator's judge: it knows the truth (which poollet is alive, what the API committed and when,
 * whose requests were spoilt on their own link) and checks the two promises and the engine's bookkeeping.
 *
 * (S) No live pool marked. A mark that lands on a pool whose poollet was neither dead nor paused in
 *     the last G is a false Unknown, unless that poollet could not have renewed, judged as of t, the
 *     confirming read the landing write was decided on (confirmedAt()): it renewed nothing
 *     in [t − G, t], and since its last renewal or over the last G of clear time before t, whichever
 *     is shorter (clear: outside stalls and refused writes, which the controller must see and cut out
 *     of the silence it counts), it tried at its cadence (no 25 s of clear
 *     time without a request), and every write it sent was spoilt on its own link, save those an
 *     API-wide fault decided (a stall or refused writes within the request's deadline), which count
 *     for neither side, as do reads and conflicts (neither a read that got through nor a write that
 *     met a conflict renews anything). Its node was then cut off, and Unknown is the truth. A poollet whose tries all
 *     fall into stalls is not excused: it leaves clear time untried, which is the phase-locked break.
 * (L) Every dead pool marked within its bound: by the instant at which the time since its death,
 *     minus the time impaired by faults that blind a controller (each fault's interval and what
 *     follows it, impairedUntil()), reaches G + slack. The pool's own failing writes impair it alone.
 * (I) After every instant: no overdue, unmarked pool of a leading engine without a next step
 *     (PoolLifecycle.strandedPools()).
 * (R) Every mark that landed is reported (logged, Evented, counted) once, by the replica that wrote
 *     it: neither twice nor never (unless that replica was killed before the answer could reach it).
 */
import {WRITE_PROBE_DEFAULTS} from '../src/core/lifecycle/sight/sight.ts'
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

/**
 * The most clear time a poollet at its cadence leaves between two tries: a tick that overran its slot
 * (a request that waited out its deadline) skips one slot, so two intervals with jitter (10 s, +4 %)
 * and some. Ticks that all fall into stalls leave more (the phase-locked break), and so does a poollet
 * that stops trying. It cannot tell a poollet that retries less than it should from bad luck under
 * loss: the retry schedule is held by the heartbeat's unit tests, and by the stall seeds with no loss.
 */
const TRY_GAP_MS = 25_000

/** The poollets' request deadline: a request sent this long before API-wide trouble may be decided by it. */
const POOLLET_DEADLINE_MS = 10_000

/** A controller's confirming read and its write are each in flight at most this long (a request deadline, and some). */
const MARK_IN_FLIGHT_MS = 15_000

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
  /** Per pool: the lease requests its poollet sent (time, a write or a read, spoilt on its own link). */
  private readonly sent = new Map<number, {at: number; write: boolean; spoilt: boolean; conflict?: true}[]>()
  private readonly status = new Map<string, string | undefined>()
  /** Per pool: marks that landed, by replica. */
  readonly landed = new Map<string, number>()
  readonly reported = new Map<string, number>()
  /** Per pool: landed marks whose writer was killed before it could hear the answer. */
  private readonly unreportable = new Map<string, number>()
  readonly evented = new Map<string, number>()
  marks = 0
  private readonly killedAt = new Map<number, number>()
  private readonly pauses: Map<number, Interval[]>
  private readonly impaired: Interval[]
  /** Stalls and refused writes: API-wide trouble that decides a poollet's request whatever its link does. */
  private readonly apiDown: Interval[]
  /** Per pool: when its poollet's renewals committed (the last few). */
  private readonly renewals = new Map<number, number[]>()
  /** Per pool: when the controllers' last write of its status was decided on (confirmedAt). */
  private readonly markSentAt = new Map<string, number>()
  /** Per pool: when a controller last sent a GET of its Lease; and the last LIST a controller sent. */
  private readonly confirmSentAt = new Map<string, number>()
  private listSentAt = -Infinity

  private readonly names: (pool: number) => string

  constructor(scenario: Scenario, gracePeriodMs: number, poolIndex: (name: string) => number | undefined, names: (pool: number) => string) {
    this.names = names
    this.scenario = scenario
    this.g = gracePeriodMs
    this.poolIndex = poolIndex
    this.pauses = new Map()
    for (const f of scenario.faults) if (f.class === 'poollet-pause') this.pauses.set(f.pool, [...(this.pauses.get(f.pool) ?? []), [f.start, f.end]])
    this.impaired = impairedIntervals(scenario.faults, gracePeriodMs)
    this.apiDown = merge(scenario.faults.filter((f) => f.class === 'stall' || f.class === 'refuse-writes').map((f): Interval => [f.start, f.end]))
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

  /**
   * The instant a write of pool sent at `at` was decided on: the controllers' last confirming read
   * (a GET of its Lease, or a LIST) before it, within MARK_IN_FLIGHT_MS; else the send itself. A later
   * read than the deciding one only makes the judgement stricter.
   */
  private confirmedAt(pool: string, at: number): number {
    const read = Math.max(this.confirmSentAt.get(pool) ?? -Infinity, this.listSentAt)
    return read <= at && at - read <= MARK_IN_FLIGHT_MS ? read : at
  }

  requestSent(by: PartyRef, op: string, at: number, outcome: string): void {
    if (by.role === 'controller') {
      const mark = /^update pool (\S+) status/.exec(op)
      if (mark !== null) this.markSentAt.set(mark[1]!, this.confirmedAt(mark[1]!, at))
      const confirm = /^get lease [^/]+\/(\S+)$/.exec(op)
      if (confirm !== null) this.confirmSentAt.set(confirm[1]!, at)
      if (op === 'list') this.listSentAt = at
    }
    if (by.role !== 'poollet' || !op.includes('lease')) return
    const log = this.sent.get(by.index) ?? []
    log.push({at, write: !op.startsWith('get '), spoilt: outcome !== 'ok'})
    // Only the last grace period of clear time (and some) is ever asked about.
    const oldest = clearSince(this.apiDown, at, 2 * this.g)
    while (log.length > 0 && log[0]!.at < oldest) log.shift()
    this.sent.set(by.index, log)
  }

  requestConflicted(by: PartyRef, op: string, at: number): void {
    if (by.role !== 'poollet' || !op.includes('lease')) return
    const request = this.sent.get(by.index)?.findLast((r) => r.at === at)
    if (request !== undefined) request.conflict = true
  }

  committed(event: WatchEvent, by: PartyRef, at: number): void {
    if (event.resource === 'leases' && by.role === 'poollet') {
      const renewals = this.renewals.get(by.index) ?? []
      renewals.push(at)
      // Only renewals up to a write's send time and a grace period before it are ever asked about.
      while (renewals.length > 2 && renewals[1]! < at - 2 * this.g) renewals.shift()
      this.renewals.set(by.index, renewals)
    }
    if (event.resource !== 'pools') return
    const pool = event.object
    const name = pool.metadata.name
    const before = this.status.get(name)
    const now = event.type === 'delete' ? undefined : pool.status?.conditions?.find((c) => c.type === READY_CONDITION)?.status
    this.status.set(name, now)
    if (now !== 'Unknown' || before === 'Unknown' || by.role !== 'controller') return
    this.marks++
    this.landed.set(name, (this.landed.get(name) ?? 0) + 1)
    // Its writer killed and restarted before the answer could reach it: no process is left to report it.
    const from = this.markSentAt.get(name) ?? at
    const writerKilled = this.scenario.faults.some((f) => f.class === 'controller-restart' && f.replica === by.index && f.start >= from && f.start <= at + MARK_IN_FLIGHT_MS)
    if (writerKilled) this.unreportable.set(name, (this.unreportable.get(name) ?? 0) + 1)
    const index = this.poolIndex(name)
    if (index === undefined) return
    const killed = this.killedAt.get(index)
    if (killed !== undefined && killed <= at) {
      for (const d of this.dead) if (d.pool === index && d.markedAt === undefined) d.markedAt = at
      return
    }
    // Judged as of the confirming read the landing write was decided on: a renewal after it the
    // controller could not have known (a poollet renewing 4 ms after 50 s of silence, while the mark
    // was on its way: seed 3322 of the loss class). That race of two writers is Kubernetes' too; the
    // poollet mends it on its next tick.
    const decidedAt = this.markSentAt.get(name)
    if (this.excused(index, at, decidedAt !== undefined && decidedAt <= at && at - decidedAt <= 2 * MARK_IN_FLIGHT_MS ? decidedAt : at)) return
    this.falseUnknowns.push({pool: index, at})
  }

  /** Whether a mark at t of a live pool is the truth: its poollet was paused, or could not have renewed (see S). */
  private excused(pool: number, landedAt: number, t: number): boolean {
    if ((this.pauses.get(pool) ?? []).some(([s, e]) => s < landedAt && e > landedAt - this.g)) return true
    const renewed = (this.renewals.get(pool) ?? []).findLast((r) => r <= t) ?? -Infinity
    if (renewed >= t - this.g) return false
    // Since its last renewal, or over the last grace period of clear time, whichever is shorter.
    const from = Math.max(renewed, clearSince(this.apiDown, t, this.g))
    const window = (this.sent.get(pool) ?? []).filter((r) => r.at >= from && r.at <= t)
    const decidedByApi = (at: number) => overlaps(this.apiDown, at, at + POOLLET_DEADLINE_MS)
    // A read that got through renews nothing, nor does a write that met a conflict (its own earlier
    // write landed unanswered, the Lease moved on: only a read that gets through mends that).
    if (!window.every((r) => r.spoilt || !r.write || r.conflict === true || decidedByApi(r.at))) return false
    let last = from
    for (const at of [...window.map((r) => r.at), t]) {
      if (clearTime(this.apiDown, last, at) > TRY_GAP_MS) return false
      last = at
    }
    return window.some((r) => r.spoilt)
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
      const unreportable = this.unreportable.get(pool) ?? 0
      if (reported > landed || reported < landed - unreportable || evented !== reported) out.push({pool, landed, reported, evented})
    }
    return out
  }
}

/**
 * When a fault that loses events (a relist, a pause, a restart: `eventsLostAt`) happens inside another
 * fault's blind spell, that whole spell is one that may have lost events: every grace period starts
 * afresh at its end, not at the fault's own (README, the bound: "after a spell that may have lost
 * events, a grace period from its end"). Seed 8: a Lease watch's silence, relisted at its end inside
 * 140 s of refused writes, restarted the graces when writes had settled, 82 s after the relist.
 */
export function impairedIntervals(faults: readonly Fault[], gracePeriodMs: number): Interval[] {
  const impairing = faults.filter((f) => impairsController(f))
  const own = impairing.map((f): Interval => [f.start, impairedUntil(f, gracePeriodMs)])
  const restarts: Interval[] = []
  for (const f of impairing) {
    const at = eventsLostAt(f)
    if (at === undefined) continue
    const spell = merge(impairing.filter((o) => o !== f).map((o): Interval => [o.start - blindBefore(o), impairedUntil(o, gracePeriodMs)])).find(([s, e]) => s <= at && e > at)
    if (spell !== undefined) restarts.push([at, spell[1] + gracePeriodMs])
  }
  return merge([...own, ...restarts])
}

/**
 * How long before a fault's start the controller's blindness may begin: refused writes, stalls, slow
 * answers and losses are blind time from the last write probe that landed (sight.ts), which may be one
 * write-probe interval (the poollets' heartbeat) before the first write the fault spoilt. A grace period
 * restarted within that interval before such a fault has no clear time of its own (seed 150128: a
 * restart's view whole at 353.5 s, writes refused from 362.6 s, blind from 353.5 s, its last landed probe).
 */
function blindBefore(f: Fault): number {
  switch (f.class) {
    case 'stall':
    case 'refuse-writes':
    case 'slow':
    case 'loss':
      return WRITE_PROBE_DEFAULTS.intervalMs
    default:
      return 0
  }
}

/** The instant a fault makes the controller lose events (a relist, a pause's end, a restart's), if it does. */
function eventsLostAt(f: Fault): number | undefined {
  switch (f.class) {
    case 'watch-silence':
      return f.end // the stream times out and relists (sim-cache.ts)
    case 'watch-gap':
      return f.relist ? f.end : undefined
    case 'controller-pause':
    case 'controller-restart':
      return f.end
    default:
      return undefined
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

/** The latest instant s ≤ `to` such that [s, to] holds `need` ms outside the (merged) intervals. */
export function clearSince(intervals: Interval[], to: number, need: number): number {
  let t = to
  let left = need
  for (let i = intervals.length - 1; i >= 0; i--) {
    const [s, e] = intervals[i]!
    if (s >= t) continue
    if (e < t) {
      if (t - e >= left) return t - left
      left -= t - e
    }
    t = Math.min(t, s)
  }
  return t - left
}

/** How much of [from, to] lies outside the (merged) intervals. */
export function clearTime(intervals: Interval[], from: number, to: number): number {
  let covered = 0
  for (const [s, e] of intervals) covered += Math.max(0, Math.min(e, to) - Math.max(s, from))
  return Math.max(0, to - from - covered)
}

function overlaps(intervals: Interval[], from: number, to: number): boolean {
  return intervals.some(([s, e]) => s < to && e > from)
}
