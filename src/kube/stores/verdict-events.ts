/**
 * The Events that carry verdicts, as `pool why` and `dry-run report` read them: the marks (the kind's
 * Unknown reason, whoever wrote them: IronCore's lifecycle controller records the same reason), the
 * dry run's WouldMarkUnknown, a write failing again and again, a stale pool that cannot be marked, each
 * with its verdict record when an ironpool controller wrote it; and the breaker's Events on the kinds'
 * CRDs. One list request per reason (a field selector cannot say "or"), each bounded.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {kindObject, parseVerdict, VERDICT_ANNOTATION, WOULD_MARK_REASON, type PoolKind, type VerdictSighting} from '../../core/index.ts'
import {apiRequest} from '../http/api-request.ts'
import {CLUSTER_EVENT_NAMESPACE} from './event-recorder.ts'

const TIMEOUT_MS = 10_000

interface WireEvent {
  metadata?: {annotations?: Record<string, string>}
  involvedObject?: {kind?: string; name?: string; uid?: string}
  reason?: string
  message?: string
  count?: number
  source?: {component?: string}
  reportingComponent?: string
  firstTimestamp?: string
  lastTimestamp?: string
  eventTime?: string
}

/** A sighting with the pool it is about. */
export interface PoolSighting extends VerdictSighting {
  kind: PoolKind['name']
  pool: string
  uid?: string
}

/** The reasons of the Events about a kind's pools that carry (or are) verdicts. */
export function verdictReasons(kind: PoolKind): string[] {
  return [kind.unknownReason, WOULD_MARK_REASON, `${kind.kind}UnknownWriteRetrying`, `${kind.kind}StaleUnmarked`]
}

async function listEvents(kc: KubeConfig, fieldSelector: string): Promise<WireEvent[]> {
  const list = await apiRequest<{items?: WireEvent[]}>(kc, {method: 'GET', path: `/api/v1/namespaces/${CLUSTER_EVENT_NAMESPACE}/events`, query: {fieldSelector}, timeoutMs: TIMEOUT_MS})
  return list.items ?? []
}

const stamp = (t: string | undefined) => (t === undefined ? Number.NaN : Date.parse(t))

/**
 * Each Event as sightings: one at its record's time (else its last timestamp), and, for an Event
 * aggregated over repeats (count > 1), one more at its first timestamp (the repeats between are
 * not kept by the API).
 */
function sightingsOf(event: WireEvent, kind: PoolKind): PoolSighting[] {
  const record = parseVerdict(event.metadata?.annotations?.[VERDICT_ANNOTATION])
  const last = record === undefined ? stamp(event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp) : Date.parse(record.at)
  if (!Number.isFinite(last)) return []
  const base = {
    kind: kind.name,
    pool: event.involvedObject?.name ?? '',
    ...(event.involvedObject?.uid ? {uid: event.involvedObject.uid} : {}),
    reason: event.reason ?? '',
    ...(event.reportingComponent || event.source?.component ? {component: event.reportingComponent || event.source?.component} : {}),
  }
  const sightings: PoolSighting[] = [{...base, at: last, ...(record === undefined ? {} : {record})}]
  const first = stamp(event.firstTimestamp)
  if ((event.count ?? 1) > 1 && Number.isFinite(first) && first < last) sightings.push({...base, at: first})
  return sightings
}

/** The verdict Events of the kinds' pools (of one pool, when named; of some reasons only, when given). */
export async function verdictEvents(kc: KubeConfig, kinds: readonly PoolKind[], pool?: string, reasons: (kind: PoolKind) => string[] = verdictReasons): Promise<PoolSighting[]> {
  const byReason = kinds.flatMap((kind) => reasons(kind).map((reason) => ({kind, reason})))
  const lists = await Promise.all(
    byReason.map(async ({kind, reason}) => {
      const selector = [`reason=${reason}`, `involvedObject.kind=${kind.kind}`, ...(pool === undefined ? [] : [`involvedObject.name=${pool}`])].join(',')
      return (await listEvents(kc, selector)).flatMap((event) => sightingsOf(event, kind))
    }),
  )
  return lists.flat()
}

/** The newest breaker Event on the kind's CRD, if any. */
export async function latestBreakerEvent(kc: KubeConfig, kind: PoolKind): Promise<{tripped: boolean; at: number; message: string} | undefined> {
  const crd = kindObject(kind).name
  const events = (
    await Promise.all(['MaxUnhealthyExceeded', 'MaxUnhealthyRecovered'].map((reason) => listEvents(kc, `reason=${reason},involvedObject.kind=CustomResourceDefinition,involvedObject.name=${crd}`)))
  ).flat()
  let newest: {tripped: boolean; at: number; message: string} | undefined
  for (const event of events) {
    const at = stamp(event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp)
    if (Number.isFinite(at) && (newest === undefined || at > newest.at)) newest = {tripped: event.reason === 'MaxUnhealthyExceeded', at, message: event.message ?? ''}
  }
  return newest
}

