/**
 * The list half of list+watch: every page of one list, as one snapshot. Pages are followed by their
 * `continue` token; all pages share the first page's resourceVersion, which is where the watch resumes.
 */
import type {ObjectGate} from './list-watch-gate.ts'
import {OversizedPageError, type Lister, type ListPage, type OversizedObject} from './list-watch-source.ts'
import type {KubeObject} from './list-watch-store.ts'

export interface Snapshot<T> {
  /** The admitted objects by key. */
  objects: Map<string, T>
  /** Every key listed, admitted or not. */
  keys: Set<string>
  /** The objects left out for their size. */
  oversized: OversizedObject[]
  resourceVersion: string
}

/**
 * onPage hears each page as it arrives: a long list that keeps answering is progress, not a gap.
 * keep, when given, says which objects the snapshot holds: the others are dropped as their page is read
 * (neither admitted nor keyed), so a list read for a few objects holds no more than a page of the rest.
 *
 * A page larger than the answer cap is asked again for half as many objects, down to one (issue 29:
 * 24 Leases of 1.45 MB made every page of 500 fail, and the view never whole); the limit doubles
 * back after each page that fits. A page of one object still too large is passed over by its
 * continue token and its object reported; if the answer says no continue token, the list fails as before.
 */
export async function listAll<T extends KubeObject>(list: Lister<T>, pageSize: number, gate: ObjectGate<T>, signal: AbortSignal, onPage: () => void = () => {}, keep?: (object: T) => boolean): Promise<Snapshot<T>> {
  const snapshot: Snapshot<T> = {objects: new Map(), keys: new Set(), oversized: [], resourceVersion: ''}
  let token: string | undefined
  let first = true
  let limit = pageSize
  for (;;) {
    let page: ListPage<T>
    try {
      page = await untilAborted(list({limit, continue: token}), signal)
    } catch (error) {
      if (!(error instanceof OversizedPageError)) throw error
      if (limit > 1) {
        limit = Math.ceil(limit / 2)
        onPage()
        continue
      }
      // Without the list's resourceVersion the first page cannot say where the watch would begin.
      if (error.skip === undefined || (first && error.skip.resourceVersion === undefined)) throw error
      page = {items: [], metadata: {resourceVersion: error.skip.resourceVersion, continue: error.skip.continue}, oversized: [error.skip.object]}
    }
    if (first) snapshot.resourceVersion = page.metadata?.resourceVersion ?? ''
    first = false
    for (const object of page.items ?? []) {
      if (keep !== undefined && !keep(object)) continue
      const key = gate.key(object)
      if (key === undefined) continue
      snapshot.keys.add(key)
      if (gate.admit(key, object)) snapshot.objects.set(key, object)
    }
    snapshot.oversized.push(...(page.oversized ?? []))
    limit = Math.min(pageSize, limit * 2)
    token = page.metadata?.continue || undefined
    if (token === undefined) return snapshot
    onPage()
  }
}

/**
 * The promise's value, or the signal's reason as soon as it aborts. client-node's list calls take no
 * signal, so an aborted list is left to finish on its own; it is one short request.
 */
function untilAborted<V>(promise: Promise<V>, signal: AbortSignal): Promise<V> {
  if (signal.aborted) return Promise.reject(signal.reason as Error)
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error)
    signal.addEventListener('abort', onAbort, {once: true})
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
