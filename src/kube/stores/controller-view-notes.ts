/**
 * What `pool status` tells an operator about the controller's own sight: the ControllerViewRestored
 * Events it recorded on the kinds' CRDs lately, each a spell during which it judged nothing (its time
 * not counted as silence; after a pause or a relist, every grace period restarted). One
 * small, bounded list request; display only: when it fails, the notes are just left out.
 */
import type {CoreV1Event, KubeConfig} from '@kubernetes/client-node'
import {formatAge, kindObject, VIEW_RESTORED_REASON, type PoolKind} from '../../core/index.ts'
import {apiRequest} from '../http/api-request.ts'
import {CLUSTER_EVENT_NAMESPACE} from './event-recorder.ts'

/** Spells older than this are history, not something an operator looking now needs told. */
export const VIEW_NOTE_WINDOW_MS = 30 * 60_000
const TIMEOUT_MS = 3_000

/** One line per recent spell, newest first, e.g. "the controller's view of machinepools was not whole for 12s (...) 3m ago". */
export async function controllerViewNotes(kc: KubeConfig, kinds: readonly PoolKind[], nowWall: number): Promise<string[]> {
  const crds = new Set(kinds.map((kind) => kindObject(kind).name))
  try {
    // The wire JSON: times are RFC 3339 strings.
    type WireEvent = Pick<CoreV1Event, 'message' | 'count'> & {involvedObject?: {name?: string}; lastTimestamp?: string; eventTime?: string; firstTimestamp?: string}
    const list = await apiRequest<{items?: WireEvent[]}>(kc, {
      method: 'GET',
      path: `/api/v1/namespaces/${CLUSTER_EVENT_NAMESPACE}/events`,
      query: {fieldSelector: `reason=${VIEW_RESTORED_REASON},involvedObject.kind=CustomResourceDefinition`},
      timeoutMs: TIMEOUT_MS,
    })
    const notes: {at: number; line: string}[] = []
    for (const event of list.items ?? []) {
      if (!crds.has(event.involvedObject?.name ?? '')) continue
      const stamp = event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp
      const at = stamp === undefined ? NaN : new Date(stamp).getTime()
      if (!Number.isFinite(at) || nowWall - at > VIEW_NOTE_WINDOW_MS) continue
      const repeats = (event.count ?? 1) > 1 ? ` (${event.count} times, the last ${formatAge(Math.max(0, nowWall - at))} ago)` : ` ${formatAge(Math.max(0, nowWall - at))} ago`
      notes.push({at, line: `${event.message ?? VIEW_RESTORED_REASON}${repeats}`})
    }
    return notes.sort((a, b) => b.at - a.at).map((n) => n.line)
  } catch {
    return []
  }
}
