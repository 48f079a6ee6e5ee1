/**
 * Where a list+watch cache gets its data: two functions, so unit tests can script them and the cache never
 * sees the API. customObjectSource() builds both for any resource outside the core group (pools, and
 * coordination.k8s.io Leases too) on the thin path (api-request.ts, watch-request.ts): lists and watch
 * events are the wire JSON alike, so the store never mixes decoded and raw objects.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {MAX_ANSWER_BYTES} from '../http/api-request.ts'
import {listPage, type ListPage} from './list-request.ts'
import type {KubeObject} from './list-watch-store.ts'
import {openWatch, type WatchCallbacks} from './watch-request.ts'

export type {ListPage, OversizedObject} from './list-request.ts'
export {OversizedPageError} from './list-request.ts'

/** One page of a list; the cache follows `continue` until the last page. */
export type Lister<T> = (page: {limit: number; continue?: string}) => Promise<ListPage<T>>

/**
 * Opens a watch from resourceVersion. Resolves once the request is answered (established, or failed, in
 * which case done() has been called already), with the means to end it.
 */
export type Watcher = (resourceVersion: string, callbacks: WatchCallbacks) => Promise<{abort(): void}>

export interface ResourceRef {
  group: string
  version: string
  plural: string
  /** Set for a namespaced resource: the cache then watches that namespace only. */
  namespace?: string
  labelSelector?: string
  fieldSelector?: string
}

export interface SourceOptions {
  /**
   * How long a stream may stay silent before the request aborts it itself (client-node's Watch
   * defaults to 30 s, shorter than the API server's one-minute bookmark period, which would break
   * every quiet watch). Set it a little above the cache's watchdog so that the watchdog decides. It
   * also bounds how long a connection attempt may hang.
   */
  inactivityTimeoutMs: number
  /**
   * Server-side watch timeout in seconds; the server sends a bookmark two seconds before it and then
   * closes the stream cleanly. Undefined leaves it to the server.
   */
  timeoutSeconds?: number | (() => number)
  /**
   * The deadline of one list page. A list that hangs is a gap in the cache's view like any other; the
   * deadline makes it end so that the cache retries. Default {@link LIST_TIMEOUT_DEFAULT_MS}.
   */
  listTimeoutMs?: number
  /** The largest answer to one list page that is read; a larger one is asked again with half the limit. Default {@link MAX_ANSWER_BYTES}. */
  maxAnswerBytes?: number
  /** The largest object (or watch event) taken into the cache; a larger one is left out and reported. Default {@link MAX_OBJECT_BYTES}. */
  maxObjectBytes?: number
  /**
   * What the cache keeps of each object, made as it arrives (client-go's SetTransform): a projection
   * of the fields its readers use. Default: the object without managedFields.
   */
  transform?: (object: unknown) => unknown
}

/**
 * The largest object a cache takes: 256 KiB. A Lease is under 1 KiB on the wire, a pool a few KiB
 * (IronCore's MachinePool with its classes and addresses under 10), and etcd holds objects up to
 * 1.5 MiB: an object past this is padding, which would cost the controller its memory and, listed
 * with others, every list page (issue 29: 24 Leases of 1.45 MB each passed the 32 MiB answer cap).
 */
export const MAX_OBJECT_BYTES = 256 * 1024

/** 500 objects per page answer in well under a second on a healthy server; a minute is a stall. */
export const LIST_TIMEOUT_DEFAULT_MS = 60_000

/**
 * The object without metadata.managedFields, as client-go's informers keep them (TransformStripManagedFields):
 * server-side apply's bookkeeping, a third of a Lease's bytes, which nothing ironpool caches reads.
 */
export function withoutManagedFields<T>(object: T): T {
  const metadata = (object as {metadata?: {managedFields?: unknown}} | undefined)?.metadata
  if (metadata !== undefined && metadata !== null && 'managedFields' in metadata) delete metadata.managedFields
  return object
}

/** The list and watch functions for one resource, and its path (for logs). */
export function customObjectSource<T>(kc: KubeConfig, ref: ResourceRef, options: SourceOptions): {list: Lister<T>; watch: Watcher; path: string} {
  const scope = ref.namespace === undefined ? '' : `/namespaces/${encodeURIComponent(ref.namespace)}`
  const path = `/apis/${ref.group}/${ref.version}${scope}/${ref.plural}`
  const selectors = {labelSelector: ref.labelSelector, fieldSelector: ref.fieldSelector}

  const transform = (options.transform ?? withoutManagedFields) as (object: unknown) => T
  const maxObjectBytes = options.maxObjectBytes ?? MAX_OBJECT_BYTES
  const list: Lister<T> = async ({limit, continue: token}) => {
    const query = {limit, continue: token, ...selectors}
    const page = await listPage<KubeObject>(kc, {path, query, timeoutMs: options.listTimeoutMs ?? LIST_TIMEOUT_DEFAULT_MS, maxAnswerBytes: options.maxAnswerBytes ?? MAX_ANSWER_BYTES, maxObjectBytes})
    return {...page, items: page.items.map(transform)}
  }

  // The watch's bytes are decoded by watch-request.ts, not by client-node's Watch: on the hot path of
  // the controller (one call per Lease event) its stream conversions cost more than the JSON.parse.
  const watch: Watcher = (resourceVersion, callbacks) => {
    const timeoutSeconds = typeof options.timeoutSeconds === 'function' ? options.timeoutSeconds() : options.timeoutSeconds
    const query = {resourceVersion, allowWatchBookmarks: true, timeoutSeconds, ...selectors}
    return openWatch(kc, {path, query, inactivityTimeoutMs: options.inactivityTimeoutMs, maxEventBytes: maxObjectBytes}, {
      // A Status (an ERROR event) or a bookmark is no object to project.
      event: (type, object) => callbacks.event(type, type === 'ERROR' || type === 'BOOKMARK' ? object : transform(object)),
      oversized: (event) => callbacks.oversized?.(event),
      done: (error) => callbacks.done(error),
    })
  }

  return {list, watch, path}
}

/** True for "410 Gone": the resourceVersion is older than the server keeps, so only a relist helps. */
export function isGone(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const {code, statusCode} = error as {code?: unknown; statusCode?: unknown}
  return code === 410 || statusCode === 410
}
