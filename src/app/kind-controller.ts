/**
 * One pool kind's part of the controller: its pool and Lease caches, its view (whole or blind, from
 * the shared sight and its own watches), its lifecycle engine, and their metrics and Events, wired
 * together. The logic lives in src/core; this only connects it.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {
  BLIND_REASONS,
  systemClock,
  breakerEvent,
  formatMaxUnhealthy,
  zoneBreakerEvent,
  breakerHoldMs,
  breakerWindowMs,
  DEFAULT_ZONE_LABELS,
  groupKeys,
  groupPhrase,
  kindObject,
  SilenceGroups,
  silenceGroupMessage,
  findCondition,
  kindEngine,
  type MaxUnhealthy,
  READY_CONDITION,
  type RequestLimiter,
  type Sight,
  sightTimings,
  viewRestoredEvent,
  type PoolKind,
  type Logger,
  type Pool,
  type StatusWritePlan,
} from '../core/index.ts'
import type {EventRecorder} from '../kube/stores/event-recorder.ts'
import {createLeaseStore, toLease} from '../kube/stores/lease-store.ts'
import {createPoolStatusStore} from '../kube/stores/pool-status-store.ts'
import {createLeaseSnapshot} from '../kube/watch/caches/lease-snapshot.ts'
import {RELISTED} from '../kube/watch/list-watch-cache.ts'
import {createLeaseCache, createPoolCache, leaseKey} from '../kube/watch/caches/resource-caches.ts'
import {NO_READY_STATUS, type ControllerMetrics} from '../observe/metrics.ts'
import type {Runnable} from '../runtime/runnable.ts'
import {oversizedObserver, type OversizedMetrics} from './oversized-reports.ts'

/** What a kind's part takes from the controller's wiring. */
export interface KindWiring {
  kubeConfig: KubeConfig
  gracePeriodMs: number
  maxUnhealthy?: MaxUnhealthy
  /** Bounds the confirming reads and writes of every kind together (one client, one APF flow). */
  limiter?: RequestLimiter
  /** --dry-run: judge, and write no pool (would-marks are logged, Evented and counted). */
  dryRun?: boolean
  /** Who judges, as verdict records name it. */
  identity?: string
  /** --zone-label: the labels whose value is a pool's zone, first found wins (silence-groups.ts). */
  zoneLabels?: readonly string[]
  logger: Logger
  /** The gauges of objects left out for their size; default: none (the log line and Event still say it). */
  oversizedMetrics?: OversizedMetrics
}

/**
 * The deadline of an Unknown write (and the reads of its conflicts): 5 s, the default lease duration
 * minus the renew deadline, so that a write sent just before leadership is lost cannot outlast the
 * moment a standby may take over.
 */
const UNKNOWN_WRITE_TIMEOUT_MS = 5_000
/** A page of the batched confirmation's LIST that hangs longer than this fails it, whatever its size. */
const LEASE_SNAPSHOT_TIMEOUT_MS = 60_000
/**
 * A gap between watch streams shorter than this is a routine reconnect, not blindness: a few seconds,
 * and a quarter of the grace period at most, so that a short grace period is not outlasted by a gap.
 */
export function watchGapToleranceMs(gracePeriodMs: number): number {
  return Math.max(200, Math.min(3_000, gracePeriodMs / 4))
}

/** One kind's caches and engine, wired together. */
export function kindController(wiring: KindWiring, kind: PoolKind, plan: StatusWritePlan, events: EventRecorder, metrics: ControllerMetrics, sight: Sight) {
  const {kubeConfig, logger} = wiring
  const observer = (resource: string) => ({
    relist: (reason: string) => metrics.cache.relists.inc({resource, reason}),
    watchRestart: (reason: string) => metrics.cache.watchRestarts.inc({resource, reason}),
    ...oversizedObserver(kind, resource, events, wiring.oversizedMetrics, resource === kind.plural ? 'the pool is not watched' : 'its pool counts as having no Lease'),
  })
  const gapToleranceMs = watchGapToleranceMs(wiring.gracePeriodMs)
  // Projections: each pool and Lease kept as the verdict and the Unknown write need it, no more, the
  // pools with the zone labels that group silence and hold zones (issue 27). A pool and its Lease
  // share one name string (heldName): each cache asks the other for the one it holds.
  const pools = createPoolCache(kubeConfig, kind, {logger, observer, gapToleranceMs, project: true, keepLabels: wiring.zoneLabels ?? DEFAULT_ZONE_LABELS, heldName: (name) => leases.get(leaseKey(kind, name))?.metadata.name})
  const leases = createLeaseCache(kubeConfig, kind, {logger, observer, gapToleranceMs, project: true, heldName: (name) => pools.get(name)?.metadata.name})
  const leaseOf = (name: string) => {
    const raw = leases.get(leaseKey(kind, name))
    return raw === undefined ? undefined : toLease(raw)
  }
  const timings = sightTimings(wiring.gracePeriodMs)
  // The confirming read is bounded like the API probe: slower is blindness, not a verdict.
  const leaseReader = createLeaseStore(kubeConfig, kind.leaseNamespace, {requestTimeoutMs: timings.probeTimeoutMs})
  let leading = false
  // Correlated silence: pools falling silent within a lease duration, grouped by zone, holder host, kind.
  const keysOf = (name: string) => groupKeys(name, pools.get(name)?.metadata.labels, leaseOf(name)?.spec.holderIdentity, wiring.zoneLabels ?? DEFAULT_ZONE_LABELS)
  const groups = new SilenceGroups({
    kind: kind.name,
    clock: systemClock,
    windowMs: breakerWindowMs(wiring.gracePeriodMs),
    settleMs: breakerHoldMs(wiring.gracePeriodMs),
    keysOf,
    census: (key) => {
      let total = 0
      let silent = 0
      for (const pool of pools.list()) {
        if (!keysOf(pool.metadata.name).some((k) => k.by === key.by && k.value === key.value)) continue
        total++
        if (lifecycle.verdict(pool.metadata.name) !== undefined) silent++
      }
      return {total, silent}
    },
    report: (report) => {
      const message = silenceGroupMessage(kind.plural, report)
      logger.warn({kind: kind.name, by: report.by, group: report.value, silent: report.silent, withinMs: report.withinMs, total: report.total, renewing: report.renewing, pools: report.examples}, message)
      events.record({...kindObject(kind), type: 'Warning', reason: 'CorrelatedSilence', message})
      metrics.correlatedSilences.inc({kind: kind.name, by: report.by, group: report.value})
    },
  })
  const {lifecycle, view, cacheState} = kindEngine({
    kind,
    clock: systemClock,
    sight,
    caches: ['pools', 'leases'],
    limiter: wiring.limiter,
    // An Unknown write is aborted when leadership ends; its deadline bounds one that hangs all the same.
    store: createPoolStatusStore(kubeConfig, kind, {logger, requestTimeoutMs: UNKNOWN_WRITE_TIMEOUT_MS}),
    getPool: (name) => pools.get(name),
    getLease: leaseOf,
    confirmLease: (name) => leaseReader.get(name),
    // Many due at once (a mass death): one consistent list confirms them all, so only the writes queue.
    // Read as the caches read their lists: no oversized Lease fails it (lease-snapshot.ts, issue 29).
    // The engine bounds each LIST by its pages (confirm-batcher.ts); this only backstops a hung page.
    listLeases: createLeaseSnapshot(kubeConfig, kind.leaseNamespace, LEASE_SNAPSHOT_TIMEOUT_MS, logger),
    confirmTimeoutMs: timings.probeTimeoutMs,
    events,
    logger: logger,
    gracePeriodMs: wiring.gracePeriodMs,
    maxUnhealthy: wiring.maxUnhealthy,
    // The per-zone breaker judges each zone of pools by the first zone label they carry.
    zoneOf: (name) => keysOf(name).find((k) => k.by === 'zone')?.value,
    plan,
    dryRun: wiring.dryRun,
    identity: wiring.identity,
    observer: {
      wouldMark: () => metrics.dryRunMarks.inc({kind: kind.name}),
      fellSilent: (name, at) => groups.fellSilent(name, at),
      zoneBreaker: (change) => {
        metrics.zoneBreakerOpen.set({kind: kind.name, zone: change.zone}, change.transition === 'tripped' ? 1 : 0)
        if (wiring.maxUnhealthy !== undefined) events.record(zoneBreakerEvent(kind, change, formatMaxUnhealthy(wiring.maxUnhealthy)))
      },
      unmarkable: (report) => metrics.staleUnmarkable.inc({kind: kind.name, reason: report.reason}),
      confirmRead: (_name, outcome) => {
        metrics.confirmReads.inc({kind: kind.name, outcome})
        // The Lease moved and its watch did not say so: the watch lags or is stuck; a relist mends it.
        if (outcome === 'renewed') leases.requestRelist('a confirming read found a renewal the watch had not delivered')
      },
      writeFailed: () => metrics.unknownWriteFailures.inc({kind: kind.name}),
      marked: (report) => {
        metrics.poolsMarkedUnknown.inc({kind: kind.name})
        metrics.unknownWriteDelay.observe(report.delayMs / 1000)
      },
      breaker: (report) => {
        const tripped = report.transition === 'tripped'
        metrics.breakerOpen.set({kind: kind.name}, tripped ? 1 : 0)
        const group = tripped ? groups.largest() : undefined
        events.record(breakerEvent(kind, report, group === undefined ? undefined : {phrase: groupPhrase(group.by, group.value), silent: group.silent}))
      },
    },
    viewObserver: {
      changed: (whole, reason) => {
        metrics.viewWhole.set({kind: kind.name}, whole ? 1 : 0)
        for (const r of BLIND_REASONS) metrics.viewBlind.set({kind: kind.name, reason: r}, r === reason ? 1 : 0)
        if (reason !== undefined) metrics.blindSpells.inc({kind: kind.name, reason})
      },
      blindFor: (reason, ms) => metrics.blindSeconds.inc({kind: kind.name, reason}, ms / 1000),
      // The spell at start-up is no news; one while leading is: pool status shows it to the operator.
      spellEnded: (spell) => {
        if (leading && spell.reasons.some((r) => r !== 'not-synced')) events.record(viewRestoredEvent(kind, spell))
      },
    },
  })
  const stateOf = (cache: typeof pools | typeof leases, whole: boolean) => (whole ? undefined : cache.synced ? 'watch-gap' : 'not-synced')
  pools.onHealth((whole, reason) => cacheState('pools', stateOf(pools, whole), reason, whole && reason === RELISTED))
  leases.onHealth((whole, reason) => cacheState('leases', stateOf(leases, whole), reason, whole && reason === RELISTED))

  const readyStatus = (pool: Pool | undefined) => findCondition(pool?.status?.conditions, READY_CONDITION)?.status ?? NO_READY_STATUS
  // The pools gauge moves with each event (old status down, new up): no scan over all pools.
  const countPool = (pool: Pool | undefined, delta: number) => {
    if (pool !== undefined) metrics.pools.inc({kind: kind.name, status: readyStatus(pool)}, delta)
  }
  pools.onEvent((event) => {
    if (event.type === 'upsert') {
      countPool(event.old, -1)
      countPool(event.object, +1)
      lifecycle.poolUpserted(event.object)
    } else {
      countPool(event.object, -1)
      lifecycle.poolDeleted(event.key)
    }
  })
  leases.onEvent((event) => {
    metrics.leaseEvents.inc()
    const name = event.object.metadata.name
    if (event.type === 'upsert') lifecycle.leaseUpserted(toLease(event.object))
    else lifecycle.leaseDeleted(name)
  })
  metrics.watchOverdue(kind.name, () => lifecycle.overdueStats())

  const caches: Runnable[] = [pools, leases].map((cache, i) => ({
    name: `${i === 0 ? kind.plural : 'leases'} cache (${kind.name})`,
    group: 'caches',
    start: (signal) => cache.start(signal),
    waitReady: (signal) => cache.waitForSync(signal),
  }))
  const engine: Runnable = {
    name: `${kind.name}pool lifecycle`,
    needLeaderElection: true,
    async start(signal) {
      leading = true
      lifecycle.setLeader(true)
      await new Promise((resolve) => signal.addEventListener('abort', resolve, {once: true}))
      leading = false
      // Leadership lost or the process stopping: the writes in flight end on their era's signal.
      // The engine lives on (a standby keeps its evidence and may lead again), so it is not closed.
      lifecycle.setLeader(false)
      await lifecycle.drain()
    },
  }
  return {kind, caches, engine, view, lifecycle}
}
