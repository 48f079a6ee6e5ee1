/**
 * The watch caches ironpool keeps, built one way for every command: a kind's pools and a kind's Leases,
 * each on the robust ListWatchCache, each checked for the fields the engine consumes (pool-validator.ts).
 */
import type {KubeConfig} from '@kubernetes/client-node'
import type {Clock, Logger, PoolKind, Pool} from '../../../core/index.ts'
import {validateLease, validatePool} from '../../../deploy/crds/pool-validator.ts'
import {ListWatchCache, type CacheObserver} from '../list-watch-cache.ts'
import {WATCHDOG_DEFAULT_MS, type Validation} from '../list-watch-options.ts'
import {customObjectSource, type ResourceRef} from '../list-watch-source.ts'
import type {KubeObject} from '../list-watch-store.ts'
import {projectLease, projectPool, type HeldName, type RawLease} from './projections.ts'

export type {RawLease} from './projections.ts'

export interface CacheDeps {
  logger: Logger
  /** Default: the system clock. */
  clock?: Clock
  observer?: (resource: string) => Partial<CacheObserver>
  /** Narrows a cache, e.g. `metadata.name=p1` for a poollet's own pool. */
  fieldSelector?: string
  labelSelector?: string
  /** See ListWatchCacheOptions.gapToleranceMs. */
  gapToleranceMs?: number
  /**
   * Keep only what a verdict needs (projections.ts), as the controller does; default false: the
   * objects whole but for managedFields, as `pool status --watch` shows them.
   */
  project?: boolean
  /** With project: the pool labels a projected pool keeps (the controller's zone labels). Default none. */
  keepLabels?: readonly string[]
  /**
   * With project: the name string the other cache holds for a name (a pool's Lease, a Lease's pool),
   * so that both keep one instance of it (projections.ts). Default none.
   */
  heldName?: HeldName
}

/** client-node's own stream timeout sits above the cache's watchdog, so that the watchdog decides. */
const INACTIVITY_TIMEOUT_MS = WATCHDOG_DEFAULT_MS + 10_000

/**
 * The server ends each watch cleanly after 50–75 % of the watchdog period (jittered, as client-go's
 * reflector jitters its 5–10 min), and the cache reopens it from the last resourceVersion without
 * losing its view. Why: the API server sends a bookmark only when it has a newer resourceVersion to
 * tell, and for a quiet resource that comes only with etcd's progress notifications (10 min by
 * default), so a healthy quiet watch could stay silent past the watchdog, which would then restart it
 * and, through the controller's blindness guard, restart every grace period. With the server closing
 * first, only a stream that is really dead (a half-open connection) reaches the watchdog.
 */
export function watchTimeoutSeconds(random: () => number = Math.random): number {
  const watchdogSeconds = WATCHDOG_DEFAULT_MS / 1000
  return Math.round(watchdogSeconds * (0.5 + 0.25 * random()))
}

function cacheOf<T extends KubeObject>(kc: KubeConfig, ref: ResourceRef, resource: string, deps: CacheDeps, validate?: (o: T) => Validation, project?: (o: unknown) => T) {
  const transform = deps.project ? project : undefined
  const source = customObjectSource<T>(kc, {...ref, fieldSelector: deps.fieldSelector, labelSelector: deps.labelSelector}, {inactivityTimeoutMs: INACTIVITY_TIMEOUT_MS, timeoutSeconds: () => watchTimeoutSeconds(), transform})
  return new ListWatchCache<T>({resource, list: source.list, watch: source.watch, logger: deps.logger, clock: deps.clock, observer: deps.observer?.(resource), validate, gapToleranceMs: deps.gapToleranceMs})
}

export function createPoolCache(kc: KubeConfig, kind: PoolKind, deps: CacheDeps): ListWatchCache<Pool & KubeObject> {
  const projection = {keepLabels: deps.keepLabels, heldName: deps.heldName}
  return cacheOf<Pool & KubeObject>(kc, {group: kind.group, version: kind.version, plural: kind.plural}, kind.plural, deps, validatePool, (object) => projectPool(object, projection))
}

export function createLeaseCache(kc: KubeConfig, kind: PoolKind, deps: CacheDeps): ListWatchCache<RawLease> {
  const ref = {group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespace: kind.leaseNamespace}
  const projection = {heldName: deps.heldName}
  return cacheOf<RawLease>(kc, ref, `leases ${kind.leaseNamespace}`, deps, validateLease, (object) => projectLease(object, projection))
}

/** The key a namespaced object has in its cache. */
export function leaseKey(kind: PoolKind, pool: string): string {
  return `${kind.leaseNamespace}/${pool}`
}
