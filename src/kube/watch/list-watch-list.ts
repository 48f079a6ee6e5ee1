/**
 * The list half of list+watch: every page of one list, as one snapshot. Pages are followed by their
 * `continue` token; all pages share the first page's resourceVersion, which is where the watch resumes.
 */
import type {ObjectGate} from './list-watch-gate.ts'
import type {Lister} from './list-watch-source.ts'
import type {KubeObject} from './list-watch-store.ts'

export interface Snapshot<T> {
  /** The admitted objects by key. */
  objects: Map<string, T>
  /** Every key listed, admitted or not. */
  keys: Set<string>
  resourceVersion: string
}

/** onPage hears each page as it arrives: a long list that keeps answering is progress, not a gap. */
export async function listAll<T extends KubeObject>(list: Lister<T>, pageSize: number, gate: ObjectGate<T>, signal: AbortSignal, onPage: () => void = () => {}): Promise<Snapshot<T>> {
  const snapshot: Snapshot<T> = {objects: new Map(), keys: new Set(), resourceVersion: ''}
  let token: string | undefined
  let first = true
  do {
    const page = await untilAborted(list({limit: pageSize, continue: token}), signal)
    if (first) snapshot.resourceVersion = page.metadata?.resourceVersion ?? ''
    first = false
    for (const object of page.items ?? []) {
      const key = gate.key(object)
      if (key === undefined) continue
      snapshot.keys.add(key)
      if (gate.admit(key, object)) snapshot.objects.set(key, object)
    }
    token = page.metadata?.continue || undefined
    if (token !== undefined) onPage()
  } while (token !== undefined)
  return snapshot
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
