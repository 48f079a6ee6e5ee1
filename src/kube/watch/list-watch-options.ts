/** The options of a list+watch cache, each default documented and filled in one place. */
import {systemClock, type Clock, type Logger} from '../../core/index.ts'
import type {Lister, Watcher} from './list-watch-source.ts'
import type {SkippedObject} from './list-watch-oversized.ts'
import type {BackoffOptions} from './watch-backoff.ts'

/**
 * ok: the store takes the object; a problem with it (a malformed field the engine reads as absent) is
 * logged once. Not ok: the object is left out, logged once.
 */
export type Validation = {ok: true; problem?: {field: string; problem: string}} | {ok: false; field: string; problem: string}

/** Counters for the metrics layer, without tying the cache to prom-client. */
export interface CacheObserver {
  /** A full list started: 'initial', 'gone', 'watch refused', 'periodic'. */
  relist(reason: string): void
  /** A watch stream ended and is reopened: 'gone', 'watchdog', 'closed', 'error', 'refused'. */
  watchRestart(reason: string): void
  /** An object event applied ('upsert', 'delete'), a bookmark, an invalid object skipped, or an object or event over the size limit. */
  event(type: 'upsert' | 'delete' | 'bookmark' | 'invalid' | 'oversized'): void
  /** An object is left out of the view for its size: once, until cleared. */
  skipped(object: SkippedObject): void
  /** An object left out for its size is gone, or small again. */
  cleared(key: string): void
}

export interface ListWatchCacheOptions<T> {
  /** Names the resource in logs and errors, e.g. 'machinepools' or 'leases ironcore-machinepool-lease'. */
  resource: string
  list: Lister<T>
  watch: Watcher
  logger: Logger
  /** Default: the system clock. */
  clock?: Clock
  /** Default: counts nothing. */
  observer?: Partial<CacheObserver>
  /** Checks each object before the store takes it; an invalid one is logged once and left out, a problem logged once. Default: all valid. */
  validate?: (object: T) => Validation
  /**
   * A stream silent this long (no event, no bookmark) is restarted. Default 2 min: twice the API
   * server's one-minute bookmark period, so a healthy quiet watch never trips it.
   */
  watchdogMs?: number
  /** A full relist this long after the last one, reconciling the store; 0 disables. Default 10 min. */
  relistIntervalMs?: number
  /**
   * How long a gap between watch streams (reconnect, relist, backoff) may last before the cache is
   * not whole. Default {@link GAP_TOLERANCE_DEFAULT_MS}: a few seconds, so that routine reconnects
   * never count as blindness and a real outage soon does.
   */
  gapToleranceMs?: number
  /** Objects per list page. Default 500, client-go's page size. */
  pageSize?: number
  /** Retry delays after failures; see watch-backoff.ts for the defaults. */
  backoff?: BackoffOptions
  /** Test seam for the backoff jitter. Default Math.random. */
  random?: () => number
}

export interface ResolvedOptions<T> extends Required<Omit<ListWatchCacheOptions<T>, 'validate' | 'observer'>> {
  validate: ((object: T) => Validation) | undefined
  observer: CacheObserver
}

export const WATCHDOG_DEFAULT_MS = 120_000
export const RELIST_DEFAULT_MS = 600_000
export const GAP_TOLERANCE_DEFAULT_MS = 3_000

export function resolveOptions<T>(options: ListWatchCacheOptions<T>): ResolvedOptions<T> {
  const noop = () => {}
  return {
    ...options,
    clock: options.clock ?? systemClock,
    validate: options.validate,
    observer: {relist: noop, watchRestart: noop, event: noop, skipped: noop, cleared: noop, ...options.observer},
    watchdogMs: options.watchdogMs ?? WATCHDOG_DEFAULT_MS,
    relistIntervalMs: options.relistIntervalMs ?? RELIST_DEFAULT_MS,
    gapToleranceMs: options.gapToleranceMs ?? GAP_TOLERANCE_DEFAULT_MS,
    pageSize: options.pageSize ?? 500,
    backoff: options.backoff ?? {},
    random: options.random ?? Math.random,
  }
}
