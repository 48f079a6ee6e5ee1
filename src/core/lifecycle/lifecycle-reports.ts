/**
 * What the controller writes and says: the kind's Unknown condition, the Event about a marked pool,
 * and the reports (log line plus observer hook) of a mark and of a breaker transition.
 */
import type {DesiredCondition} from '../conditions.ts'
import type {BreakerReport, MarkReport, UnmarkableReport} from './lifecycle-options.ts'
import {formatMaxUnhealthy} from './mass-silence/max-unhealthy.ts'
import type {PoolKind} from '../pool-kinds.ts'
import type {Logger, PoolEvent} from '../ports.ts'
import type {Pool} from '../types.ts'
import {formatDuration} from '../durations.ts'
import type {BlindSpell} from './sight/view-state.ts'
import {VERDICT_ANNOTATION, WOULD_MARK_REASON, type VerdictRecord} from './verdict.ts'
import {verdictAnnotation} from './verdict-record.ts'
import type {ZoneTransition} from './mass-silence/zone-breakers.ts'

/** Ready=Unknown with the kind's reason and message, observedGeneration = the pool's generation. */
export function unknownReady(kind: PoolKind, pool: Pool): Omit<DesiredCondition, 'type'> {
  return {
    status: 'Unknown',
    reason: kind.unknownReason,
    message: kind.unknownMessage,
    observedGeneration: pool.metadata.generation,
  }
}

export function unknownEvent(kind: PoolKind, pool: Pool): PoolEvent {
  return {
    kind: kind.kind,
    apiVersion: `${kind.group}/${kind.version}`,
    name: pool.metadata.name,
    uid: pool.metadata.uid,
    type: 'Warning',
    reason: kind.unknownReason,
    message: kind.unknownMessage,
  }
}

/** An Event that carries a verdict record (the mark's, the dry run's, a held pool's). */
export function withVerdict(event: PoolEvent, record: VerdictRecord | undefined): PoolEvent {
  return record === undefined ? event : {...event, annotations: {...event.annotations, [VERDICT_ANNOTATION]: verdictAnnotation(record)}}
}

/** The dry run's Event: what it would have written, and why (the record). Normal: nothing is wrong with the pool's API. */
export function wouldMarkEvent(kind: PoolKind, pool: Pool): PoolEvent {
  return {
    ...unknownEvent(kind, pool),
    type: 'Normal',
    reason: WOULD_MARK_REASON,
    message: `dry run: would set Ready=Unknown (${kind.unknownReason}): ${kind.unknownMessage}`,
  }
}

/** A pool whose Unknown write keeps failing: said once per overdue spell, with the record, so `pool why` can name what holds it. */
export function writeRetryingEvent(kind: PoolKind, pool: Pool, error: string): PoolEvent {
  return {...unknownEvent(kind, pool), reason: `${kind.kind}UnknownWriteRetrying`, message: `stale, not marked yet: writing Ready=Unknown failed (${error}); retrying`}
}

/** The record's figures a mark's log line carries, so the log and `pool why` say the same. */
function verdictFields(record: VerdictRecord | undefined): object {
  return record === undefined ? {} : {silenceMs: record.silenceMs, blindExcludedMs: record.blindExcludedMs, blindReasons: record.blindReasons}
}

export function logWouldMark(logger: Logger, kind: PoolKind, report: MarkReport, record?: VerdictRecord): void {
  logger.info({kind: kind.name, pool: report.name, delayMs: report.delayMs, retries: report.retries, ...verdictFields(record), dryRun: true}, 'dry run: pool would be marked Ready=Unknown')
}

export function markReport(name: string, deadline: number, writtenAt: number, retries: number): MarkReport {
  return {name, deadline, writtenAt, delayMs: writtenAt - deadline, retries}
}

export function logMark(logger: Logger, kind: PoolKind, report: MarkReport, record?: VerdictRecord): void {
  logger.info({kind: kind.name, pool: report.name, delayMs: report.delayMs, retries: report.retries, ...verdictFields(record)}, 'pool marked Ready=Unknown')
}

export function logBreaker(logger: Logger, kind: PoolKind, report: BreakerReport): void {
  const fields = {kind: kind.name, unhealthy: report.unhealthy, total: report.total, maxUnhealthy: formatMaxUnhealthy(report.limit)}
  if (report.transition === 'tripped') logger.warn(fields, 'too many pools stale at once; marking none until fewer are')
  else logger.info(fields, 'stale pools back within --max-unhealthy; marking resumes')
}

/** The reason of the Event, on a kind's CRD, that says the controller was blind: `pool status` looks for it. */
export const VIEW_RESTORED_REASON = 'ControllerViewRestored'

/** The CRD of a kind, as an Event's involved object (for what concerns the kind, not one pool). */
export function kindObject(kind: PoolKind): Pick<PoolEvent, 'apiVersion' | 'kind' | 'name'> {
  return {apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `${kind.plural}.${kind.group}`}
}

export function viewRestoredEvent(kind: PoolKind, spell: BlindSpell): PoolEvent {
  const reasons = [...new Set(spell.reasons)].join(', ')
  return {
    ...kindObject(kind),
    type: 'Warning',
    reason: VIEW_RESTORED_REASON,
    message: `the controller's view of ${kind.plural} was not whole for ${formatDuration(Math.round(spell.durationMs))} (${reasons}); ${
      spell.lost ? 'every grace period restarted when it was whole again' : 'that time did not count as silence'
    }`,
  }
}

/** Why a stale pool stays unmarked, as the Event, the log line and `pool status` say it. */
export function unmarkableMessage(kind: PoolKind, reason: UnmarkableReport['reason']): string {
  return reason === 'no-conditions'
    ? `stale, cannot be marked: this API has no conditions for ${kind.plural}`
    : `stale, cannot be marked: the API did not keep the Ready condition written to ${kind.plural}`
}

/** The Event about a stale pool that could not be marked: a report of staleness, not a claim of a mark. */
export function unmarkableEvent(kind: PoolKind, pool: Pool, reason: UnmarkableReport['reason']): PoolEvent {
  return {...unknownEvent(kind, pool), reason: `${kind.kind}StaleUnmarked`, message: unmarkableMessage(kind, reason)}
}

export function logUnmarkable(logger: Logger, kind: PoolKind, report: UnmarkableReport): void {
  logger.warn({kind: kind.name, pool: report.name, reason: report.reason}, `pool ${report.name} ${unmarkableMessage(kind, report.reason)}`)
}

export function logZoneBreaker(logger: Logger, kind: PoolKind, change: ZoneTransition): void {
  const fields = {kind: kind.name, zone: change.zone, unhealthy: change.unhealthy, total: change.total}
  if (change.transition === 'tripped') logger.warn(fields, `too many pools stale at once in zone ${change.zone}; marking none there until fewer are`)
  else logger.info(fields, `stale pools in zone ${change.zone} back within --max-unhealthy; marking resumes there`)
}

/** A zone held or released by its breaker: on the kind's CRD, naming the zone. */
export function zoneBreakerEvent(kind: PoolKind, change: ZoneTransition, limit: string): PoolEvent {
  const tripped = change.transition === 'tripped'
  return {
    ...kindObject(kind),
    type: tripped ? 'Warning' : 'Normal',
    reason: tripped ? 'ZoneMaxUnhealthyExceeded' : 'ZoneMaxUnhealthyRecovered',
    message: tripped
      ? `${change.unhealthy} of ${change.total} ${kind.plural} in zone ${change.zone} stale at once, more than --max-unhealthy=${limit}: marking none there; other zones are judged`
      : `${change.unhealthy} of ${change.total} ${kind.plural} in zone ${change.zone} stale, within --max-unhealthy=${limit}: marking resumed there`,
  }
}

/** The breaker concerns a kind, not a pool: its Event goes on the kind's CRD. */
export function breakerEvent(kind: PoolKind, report: BreakerReport, group?: {phrase: string; silent: number}): PoolEvent {
  const tripped = report.transition === 'tripped'
  const limit = formatMaxUnhealthy(report.limit)
  return {
    ...kindObject(kind),
    type: tripped ? 'Warning' : 'Normal',
    reason: tripped ? 'MaxUnhealthyExceeded' : 'MaxUnhealthyRecovered',
    message: tripped
      ? `${report.unhealthy} of ${report.total} ${kind.plural} stale at once, more than --max-unhealthy=${limit}: marking none Unknown${group === undefined ? '' : ` (${group.silent} of them ${group.phrase})`}`
      : `${report.unhealthy} of ${report.total} ${kind.plural} stale, within --max-unhealthy=${limit}: marking resumed`,
  }
}
