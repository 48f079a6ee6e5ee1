/**
 * What `pool status` shows of a pool whose API has no conditions (IronCore's BucketPool): the latest
 * runtime probe Event its poollet recorded (<Kind>ProbeFailed or <Kind>ProbeSucceeded, heartbeat.ts),
 * the only place a runtime going away shows there. One bounded list request per such kind; display
 * only: when it fails, the notes are just left out.
 */
import type {CoreV1Event, KubeConfig} from '@kubernetes/client-node'
import {formatAge, type PoolKind} from '../../core/index.ts'
import {apiRequest} from '../http/api-request.ts'
import {CLUSTER_EVENT_NAMESPACE} from './event-recorder.ts'

const TIMEOUT_MS = 3_000
/** A list's page: the newest of a few hundred pools' Events is enough for a display. */
const LIMIT = 500

/** The reasons the poollet records for a kind without conditions. */
export function probeEventReasons(kind: PoolKind): {failed: string; succeeded: string} {
  return {failed: `${kind.kind}ProbeFailed`, succeeded: `${kind.kind}ProbeSucceeded`}
}

/**
 * For each pool of kinds with a probe Event, its latest as one line, keyed `<kind>/<pool>`, e.g.
 * "runtime probe failed 2m ago: /bucket.v1alpha1.BucketRuntime/ListBucketClasses UNAVAILABLE: ... (BucketPoolProbeFailed)".
 */
export async function probeEventNotes(kc: KubeConfig, kinds: readonly PoolKind[], nowWall: number): Promise<Map<string, string>> {
  const notes = new Map<string, {at: number; rv: number; line: string}>()
  await Promise.all(
    kinds.map(async (kind) => {
      const reasons = probeEventReasons(kind)
      type WireEvent = Pick<CoreV1Event, 'message' | 'reason'> & {
        metadata?: {resourceVersion?: string}
        involvedObject?: {name?: string; apiVersion?: string}
        lastTimestamp?: string
        eventTime?: string
        firstTimestamp?: string
      }
      try {
        const list = await apiRequest<{items?: WireEvent[]}>(kc, {
          method: 'GET',
          path: `/api/v1/namespaces/${CLUSTER_EVENT_NAMESPACE}/events`,
          query: {fieldSelector: `involvedObject.kind=${kind.kind}`, limit: LIMIT},
          timeoutMs: TIMEOUT_MS,
        })
        for (const event of list.items ?? []) {
          if (event.reason !== reasons.failed && event.reason !== reasons.succeeded) continue
          if (event.involvedObject?.apiVersion !== undefined && !event.involvedObject.apiVersion.startsWith(`${kind.group}/`)) continue
          const name = event.involvedObject?.name
          const stamp = event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp
          const at = stamp === undefined ? NaN : new Date(stamp).getTime()
          if (name === undefined || !Number.isFinite(at)) continue
          const key = `${kind.name}/${name}`
          // The server keeps lastTimestamp to the second, and a failure and its recovery often fall in
          // one: within a second the later write (the larger resourceVersion, etcd's revision) wins.
          const rv = Number(event.metadata?.resourceVersion ?? NaN)
          const known = notes.get(key)
          if (known !== undefined && (known.at > at || (known.at === at && !(rv > known.rv)))) continue
          const what = event.reason === reasons.failed ? 'runtime probe failed' : 'runtime probe succeeded'
          notes.set(key, {at, rv, line: `${what} ${formatAge(Math.max(0, nowWall - at))} ago: ${event.message ?? ''} (${event.reason})`})
        }
      } catch {
        // display only
      }
    }),
  )
  return new Map([...notes].map(([key, note]) => [key, note.line]))
}
