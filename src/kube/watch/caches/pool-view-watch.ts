/**
 * `pool status --watch`: one list+watch cache for each kind's pools and one for its Leases, and a new
 * view reported whenever what a pool row says changes. Driven by cache events, plus one timer per pool
 * for the moment its Lease would expire, because expiry is the one change no event announces.
 * The caches retry on their own (backoff, relist) while the API is away; their warnings go to the logger.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {systemClock, type Cancel, type Clock, type PoolKind, poolView, type PoolView, type Logger} from '../../../core/index.ts'
import {toLease} from '../../stores/lease-store.ts'
import {createLeaseCache, createPoolCache, leaseKey} from './resource-caches.ts'

export interface PoolWatchOptions {
  kc: KubeConfig
  kinds: readonly PoolKind[]
  selector?: string
  /** Only these pools; all when empty. */
  names?: readonly string[]
  logger: Logger
  /** What was printed already (the first table): only departures from it are reported. */
  printed: readonly PoolView[]
  onChange: (view: PoolView) => void
  /** Whether the API can hold a Ready for the kind (see PoolViewOptions). Default: always. */
  canMark?: (kind: PoolKind) => boolean
  /** Default: the system clock. */
  clock?: Clock
}

/** A little past the expiry instant, so the view computed then already says expired. */
const EXPIRY_MARGIN_MS = 50
/** What a row says, without the ages that move every second: a change here is a new row. */
function rowKey(view: PoolView): string {
  return JSON.stringify([view.ready, view.reason, view.message, view.holder, view.lease, view.leaseDurationSeconds, view.skew.length > 0, view.notes])
}

const id = (kind: PoolKind, name: string) => `${kind.name}/${name}`

/** Runs until the signal aborts. */
export async function watchPools(options: PoolWatchOptions, signal: AbortSignal): Promise<void> {
  const clock = options.clock ?? systemClock
  const names = new Set(options.names ?? [])
  const last = new Map(options.printed.map((view) => [`${view.kind}/${view.name}`, rowKey(view)]))
  const expiryTimers = new Map<string, Cancel>()
  let synced = false

  const kinds = options.kinds.map((kind) => {
    const deps = {logger: options.logger, clock: options.clock}
    const pools = createPoolCache(options.kc, kind, {...deps, labelSelector: options.selector})
    const leases = createLeaseCache(options.kc, kind, deps)
    return {kind, pools, leases}
  })

  const recompute = ({kind, pools, leases}: (typeof kinds)[number], name: string): void => {
    const key = id(kind, name)
    expiryTimers.get(key)?.()
    expiryTimers.delete(key)
    const raw = pools.get(name)
    if (!synced || (names.size > 0 && !names.has(name))) return
    if (raw === undefined) {
      // Deleted: forgotten, so a pool created again under this name is shown again.
      last.delete(key)
      return
    }
    const v1Lease = leases.get(leaseKey(kind, name))
    const view = poolView(kind, raw, v1Lease && toLease(v1Lease), clock.wall(), {canMark: options.canMark?.(kind) ?? true})
    if (last.get(key) !== rowKey(view)) {
      last.set(key, rowKey(view))
      options.onChange(view)
    }
    // The next change no event announces: the Lease's expiry, then the moment the pool is overdue.
    const next = view.lease === 'valid' ? view.expiresAt : view.overdueAt !== undefined && Date.parse(view.overdueAt) > clock.wall() ? view.overdueAt : undefined
    if (next !== undefined) {
      const inMs = Date.parse(next) - clock.wall() + EXPIRY_MARGIN_MS
      expiryTimers.set(key, clock.setTimer(Math.max(0, inMs), () => recompute({kind, pools, leases}, name)))
    }
  }

  for (const entry of kinds) {
    entry.pools.onEvent((event) => recompute(entry, event.key))
    entry.leases.onEvent((event) => recompute(entry, event.key.slice(entry.kind.leaseNamespace.length + 1)))
  }
  const running = kinds.flatMap(({pools, leases}) => [pools.start(signal), leases.start(signal)])
  try {
    await Promise.all(kinds.flatMap(({pools, leases}) => [pools.waitForSync(signal), leases.waitForSync(signal)]))
    synced = true
    for (const entry of kinds) for (const raw of entry.pools.list()) recompute(entry, raw.metadata?.name ?? '')
  } catch {
    // Aborted before the caches were whole: nothing more to show.
  }
  await Promise.all(running)
  for (const cancel of expiryTimers.values()) cancel()
}
