/**
 * `ironpool pool why`: why a pool is marked Unknown, or what keeps a silent one from being marked,
 * from what the API holds: the pool, its Lease, and the verdict records the controllers left on their
 * Events (a mark's, a write failing again and again, a stale pool the API cannot hold a mark for, a dry
 * run's would-mark) and the breaker's Events on the kind's CRD. A record is about the silence that
 * began with the Lease renewal it names: once the Lease shows another, the record is history.
 */
import {findCondition} from '../../conditions.ts'
import {formatDuration} from '../../durations.ts'
import {READY_CONDITION, type PoolKind} from '../../pool-kinds.ts'
import type {Lease, Pool} from '../../types.ts'
import {leaseExpiry} from './pool-view.ts'
import {WOULD_MARK_REASON, type VerdictRecord} from '../verdict.ts'

/** An Event as `pool why` reads it: its reason, its source, its time (wall ms), and the record it carries. */
export interface VerdictSighting {
  reason: string
  component?: string
  at: number
  record?: VerdictRecord
}

export type WhyVerdict = 'marked' | 'not-marked' | 'unknown'

/** The exit code of each answer: scripts tell them apart without parsing (1 is a failure, 2 a usage error). */
export const WHY_EXIT_CODES: Record<WhyVerdict, number> = {marked: 0, 'not-marked': 3, unknown: 4}

export interface PoolWhy {
  kind: string
  pool: string
  uid?: string
  ready: {status: string; reason?: string; lastTransitionTime?: string}
  verdict: WhyVerdict
  /** One sentence: the answer. */
  summary: string
  /** What holds a silent pool (a record's state and hold, or the breaker), and since when (the controller's clock). */
  heldBy?: {what: string; since?: string}
  /** The record behind the answer (the mark's, or the held pool's). */
  record?: VerdictRecord
  /** The newest would-mark of a dry run for the current silence, if any. */
  dryRun?: VerdictRecord
}

export interface WhyInput {
  kind: PoolKind
  pool: Pool
  lease?: Lease
  /** The Events about this pool that carry a record or a mark, any order. */
  sightings: readonly VerdictSighting[]
  /** The newest breaker Event on the kind's CRD, if any. */
  breaker?: {tripped: boolean; at: number; message: string}
  /** The local wall clock (ms): only to say whether the Lease looks current, display only as in `pool status`. */
  nowWall: number
}

const ms = (n: number) => formatDuration(Math.round(n))

/** The silence, grace and blind time of a record, as one clause. */
export function silenceClause(record: VerdictRecord): string {
  const blind = record.blindExcludedMs > 0 ? `; ${ms(record.blindExcludedMs)} blind not counted (${record.blindReasons.join(', ')})` : ''
  return `silent for ${ms(record.silenceMs)} against a grace period of ${ms(record.gracePeriodMs)}${blind}`
}

/** Whether a record is about the current silence: the Lease still shows the renewal it names. */
function current(record: VerdictRecord, lease: Lease | undefined, uid: string | undefined): boolean {
  if (uid !== undefined && record.uid !== undefined && record.uid !== uid) return false
  return record.lastProgress.renewTime === lease?.spec.renewTime
}

const newest = (sightings: readonly VerdictSighting[]) => [...sightings].sort((a, b) => b.at - a.at)[0]

export function explainPool(input: WhyInput): PoolWhy {
  const {kind, pool, lease} = input
  const uid = pool.metadata.uid
  const ready = findCondition(pool.status?.conditions, READY_CONDITION)
  const base = {
    kind: kind.name,
    pool: pool.metadata.name,
    ...(uid === undefined ? {} : {uid}),
    ready: {status: ready?.status ?? 'None', ...(ready?.reason === undefined ? {} : {reason: ready.reason}), ...(ready?.lastTransitionTime ? {lastTransitionTime: ready.lastTransitionTime} : {})},
  }
  const withRecords = input.sightings.filter((s) => s.record !== undefined)
  const wouldMark = newest(withRecords.filter((s) => s.reason === WOULD_MARK_REASON && current(s.record!, lease, uid)))
  const dryRun = wouldMark === undefined ? {} : {dryRun: wouldMark.record!}
  const dryNote = wouldMark === undefined ? '' : `; a dry run (${wouldMark.record!.controller}) would have marked it at ${wouldMark.record!.stateSince}`

  if (ready?.status === 'Unknown') {
    const mark = newest(withRecords.filter((s) => s.reason === kind.unknownReason && s.record!.state === 'marked' && !s.record!.dryRun))
    if (mark === undefined) {
      return {...base, verdict: 'marked', ...dryRun, summary: `Ready=Unknown (${ready.reason ?? 'no reason'}), with no verdict record: marked by a controller that keeps none (IronCore's lifecycle controller), or its Event has expired${dryNote}`}
    }
    const r = mark.record!
    return {...base, verdict: 'marked', record: r, ...dryRun, summary: `marked Ready=Unknown by ${r.controller} at ${r.stateSince}: ${silenceClause(r)}; confirmed by a fresh read of its Lease${r.retries > 0 ? ` after ${r.retries} failed attempts` : ''}`}
  }

  const held = newest(withRecords.filter((s) => s.reason !== WOULD_MARK_REASON && s.record!.state !== 'marked' && current(s.record!, lease, uid)))
  if (held !== undefined) {
    const r = held.record!
    const what = r.state === 'held' ? `held (${r.hold ?? 'unknown'})` : r.state
    const error = r.lastError === undefined ? '' : `: ${r.lastError}`
    return {...base, verdict: 'not-marked', record: r, heldBy: {what, since: r.stateSince}, ...dryRun, summary: `not marked: ${what} since ${r.stateSince}${error}; ${silenceClause(r)}${dryNote}`}
  }
  if (input.breaker?.tripped) {
    return {...base, verdict: 'not-marked', heldBy: {what: 'held (breaker)', since: new Date(input.breaker.at).toISOString()}, ...dryRun, summary: `not marked: the breaker holds every ${kind.name}pool (${input.breaker.message})${dryNote}`}
  }
  if (ready?.status === 'False') {
    return {...base, verdict: 'not-marked', ...dryRun, summary: `not marked: Ready=False (${ready.reason ?? 'no reason'}) is its poollet's own report: it is alive and says its runtime is not${dryNote}`}
  }
  if (wouldMark !== undefined) {
    const r = wouldMark.record!
    return {...base, verdict: 'not-marked', ...dryRun, summary: `not marked (no controller in charge marked it); a dry run (${r.controller}) would have at ${r.stateSince}: ${silenceClause(r)}`}
  }
  const expires = lease === undefined ? undefined : leaseExpiry(lease.spec)
  if (expires !== undefined && Date.parse(expires) > input.nowWall) {
    return {...base, verdict: 'not-marked', summary: `not marked: alive, its Lease was renewed at ${lease?.spec.renewTime} and is valid until ${expires} (by the local clock)`}
  }
  return {
    ...base,
    verdict: 'unknown',
    summary: `not marked, and no verdict record says why: alive, or not past the controller's grace period yet, or the controller is blind or not running (see ironpool_controller_pools_overdue and its /readyz)`,
  }
}

/**
 * What `pool status` says of a dry run beside the controller in charge: the newest would-mark of the
 * pool's current silence, if any ("would mark", or "agrees" when the pool is marked already).
 */
export function dryRunNote(kind: PoolKind, pool: Pool, lease: Lease | undefined, sightings: readonly VerdictSighting[]): string | undefined {
  const would = newest(sightings.filter((s) => s.reason === WOULD_MARK_REASON && s.record !== undefined && current(s.record, lease, pool.metadata.uid)))
  if (would === undefined) return undefined
  const r = would.record!
  const marked = findCondition(pool.status?.conditions, READY_CONDITION)?.status === 'Unknown'
  return `dry run (${r.controller}) ${marked ? 'agrees: it would have marked it' : 'would mark it Unknown'} at ${r.stateSince}, ${silenceClause(r)}`
}
