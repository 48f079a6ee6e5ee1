/**
 * The controller's wiring: per pool kind a pool cache, a Lease cache and the lifecycle engine; leader
 * election, events, metrics and probes; all under one manager. The logic lives in src/core.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {
  systemClock,
  errorMessage,
  findCondition,
  LeaderElector,
  type LeaderElectionTimings,
  formatMaxUnhealthy,
  type MaxUnhealthy,
  PoolLifecycle,
  READY_CONDITION,
  Sight,
  sightTimings,
  ViewState,
  kindObject,
  viewRestoredEvent,
  type PoolKind,
  type Logger,
  type Pool,
  type StatusWritePlan,
} from '../core/index.ts'
import {createApiProbe, type ApiProbe} from '../kube/api-probe.ts'
import {EventRecorder} from '../kube/event-recorder.ts'
import {describeWritePlan, learnWritePlan} from '../kube/served-schema.ts'
import {csrApprovalRunnables} from './csr-approval.ts'
import {createLeaseStore, toLease} from '../kube/lease-store.ts'
import {createPoolStatusStore} from '../kube/pool-status-store.ts'
import {createLeaseCache, createPoolCache, leaseKey} from '../kube/resource-caches.ts'
import type {BindAddress} from '../observe/bind-address.ts'
import {observeServers} from '../observe/http-server.ts'
import {createControllerMetrics, createRegistry, NO_READY_STATUS, type ControllerMetrics} from '../observe/metrics.ts'
import {Manager} from '../runtime/manager.ts'
import type {LeaderElection, Runnable} from '../runtime/runnable.ts'

export const CONTROLLER_COMPONENT = 'ironpool-controller'
/**
 * The deadline of an Unknown write (and the reads of its conflicts): 5 s, the default lease duration
 * minus the renew deadline, so that a write sent just before leadership is lost cannot outlast the
 * moment a standby may take over.
 */
const UNKNOWN_WRITE_TIMEOUT_MS = 5_000
/** At exit, Events still in flight get this long; shutdown stays within a few seconds. */
export const EVENT_FLUSH_TIMEOUT_MS = 2_000

export interface ControllerWiring {
  kubeConfig: KubeConfig
  kinds: readonly PoolKind[]
  gracePeriodMs: number
  maxUnhealthy?: MaxUnhealthy
  leaderElection?: {namespace: string; id: string; identity: string; timings: LeaderElectionTimings}
  metricsAddress?: BindAddress
  probeAddress?: BindAddress
  /** `--approve-poollet-csrs`: approve poollets' client certificates by IronCore's rules (csr-approval.ts). */
  approvePoolletCsrs?: boolean
  logger: Logger
}

/**
 * A gap between watch streams shorter than this is a routine reconnect, not blindness: a few seconds,
 * and a quarter of the grace period at most, so that a short grace period is not outlasted by a gap.
 */
export function watchGapToleranceMs(gracePeriodMs: number): number {
  return Math.max(200, Math.min(3_000, gracePeriodMs / 4))
}

/** One kind's caches and engine, wired together. */
function kindController(wiring: ControllerWiring, kind: PoolKind, plan: StatusWritePlan, events: EventRecorder, metrics: ControllerMetrics, sight: Sight) {
  const {kubeConfig, logger} = wiring
  const observer = (resource: string) => ({
    relist: (reason: string) => metrics.cache.relists.inc({resource, reason}),
    watchRestart: (reason: string) => metrics.cache.watchRestarts.inc({resource, reason}),
  })
  const gapToleranceMs = watchGapToleranceMs(wiring.gracePeriodMs)
  const pools = createPoolCache(kubeConfig, kind, {logger, observer, gapToleranceMs})
  const leases = createLeaseCache(kubeConfig, kind, {logger, observer, gapToleranceMs})
  const leaseOf = (name: string) => {
    const raw = leases.get(leaseKey(kind, name))
    return raw === undefined ? undefined : toLease(raw)
  }
  const timings = sightTimings(wiring.gracePeriodMs)
  // The confirming read is bounded like the API probe: slower is blindness, not a verdict.
  const leaseReader = createLeaseStore(kubeConfig, kind.leaseNamespace, {requestTimeoutMs: timings.probeTimeoutMs})
  let leading = false
  // canJudge and the view's observer refer to each other: neither is called before both exist.
  const lifecycle = new PoolLifecycle({
    kind,
    clock: systemClock,
    // An Unknown write is aborted when leadership ends; its deadline bounds one that hangs all the same.
    store: createPoolStatusStore(kubeConfig, kind, {logger, requestTimeoutMs: UNKNOWN_WRITE_TIMEOUT_MS}),
    getPool: (name) => pools.get(name),
    getLease: leaseOf,
    confirmLease: (name) => leaseReader.get(name),
    confirmTimeoutMs: timings.probeTimeoutMs,
    onConfirmFailed: (name, error) => sight.reportApiFailure(`confirming the silence of ${kind.name}pool ${name}: ${errorMessage(error)}`),
    canJudge: () => sight.check() && view.whole,
    events,
    logger: logger,
    gracePeriodMs: wiring.gracePeriodMs,
    maxUnhealthy: wiring.maxUnhealthy,
    plan,
    observer: {
      unmarkable: (report) => metrics.staleUnmarkable.inc({kind: kind.name, reason: report.reason}),
      confirmRead: (_name, outcome) => {
        metrics.confirmReads.inc({kind: kind.name, outcome})
        // The Lease moved and its watch did not say so: the watch lags or is stuck; a relist mends it.
        if (outcome === 'renewed') leases.requestRelist('a confirming read found a renewal the watch had not delivered')
      },
      marked: (report) => {
        metrics.poolsMarkedUnknown.inc({kind: kind.name})
        metrics.unknownWriteDelay.observe(report.delayMs / 1000)
      },
      breaker: (report) => {
        const tripped = report.transition === 'tripped'
        metrics.breakerOpen.set({kind: kind.name}, tripped ? 1 : 0)
        // The breaker concerns a kind, not a pool: its Event goes on the kind's CRD.
        events.record({
          ...kindObject(kind),
          type: tripped ? 'Warning' : 'Normal',
          reason: tripped ? 'MaxUnhealthyExceeded' : 'MaxUnhealthyRecovered',
          message: tripped
            ? `${report.unhealthy} of ${report.total} ${kind.plural} stale at once, more than --max-unhealthy=${formatMaxUnhealthy(report.limit)}: marking none Unknown`
            : `${report.unhealthy} of ${report.total} ${kind.plural} stale, within --max-unhealthy=${formatMaxUnhealthy(report.limit)}: marking resumed`,
        })
      },
    },
  })
  const view = new ViewState({
    clock: systemClock,
    logger,
    sources: ['sight', 'pools', 'leases'],
    fields: {kind: kind.name},
    observer: {
      changed: (whole, reason) => {
        metrics.viewWhole.set({kind: kind.name}, whole ? 1 : 0)
        if (reason !== undefined) metrics.blindSpells.inc({kind: kind.name, reason})
        lifecycle.setViewWhole(whole)
      },
      blindFor: (reason, ms) => metrics.blindSeconds.inc({kind: kind.name, reason}, ms / 1000),
      // The spell at start-up is no news; one while leading is: pool status shows it to the operator.
      spellEnded: (spell) => {
        if (leading && spell.reasons.some((r) => r !== 'not-synced')) events.record(viewRestoredEvent(kind, spell))
      },
    },
  })
  const cacheState = (cache: typeof pools | typeof leases, whole: boolean) => (whole ? undefined : cache.synced ? 'watch-gap' : 'not-synced')
  pools.onHealth((whole, reason) => view.set('pools', cacheState(pools, whole), reason))
  leases.onHealth((whole, reason) => view.set('leases', cacheState(leases, whole), reason))
  sight.subscribe((state) => view.set('sight', state.reason, state.detail))
  view.set('sight', sight.state.reason, sight.state.detail)

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
  lifecycle.setViewWhole(view.whole)

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
      lifecycle.setLeader(false)
      await lifecycle.close()
    },
  }
  return {kind, caches, engine, view}
}

/** The API probe, timed and counted for /metrics. */
function measuredProbe(probe: ApiProbe, metrics: ControllerMetrics): ApiProbe {
  return async (signal) => {
    const end = metrics.apiProbeDuration.startTimer()
    try {
      await probe(signal)
    } catch (error) {
      metrics.apiProbeFailures.inc()
      throw error
    } finally {
      end()
    }
  }
}

/** Runs the controller until signal aborts; rejects on a failure, or with LeadershipLostError. */
export async function runController(wiring: ControllerWiring, signal: AbortSignal): Promise<void> {
  const {logger} = wiring
  const registry = createRegistry()
  const metrics = createControllerMetrics(registry, wiring.kinds.map((k) => k.name))
  const events = new EventRecorder({kubeConfig: wiring.kubeConfig, clock: systemClock, logger, component: CONTROLLER_COMPONENT})
  const timings = sightTimings(wiring.gracePeriodMs)
  const probeNamespace = wiring.kinds[0]?.leaseNamespace ?? 'default'
  const sight = new Sight({clock: systemClock, logger, probe: measuredProbe(createApiProbe(wiring.kubeConfig, probeNamespace, timings.probeTimeoutMs), metrics), ...timings})
  // What each kind's API can hold of a Ready condition, learnt once (IronCore's BucketPool: nothing).
  const plans = await Promise.all(wiring.kinds.map((kind) => learnWritePlan(wiring.kubeConfig, kind, {logger})))
  wiring.kinds.forEach((kind, i) => logger.info({kind: kind.name}, `write plan: ${describeWritePlan(kind, plans[i]!)}`))
  const kinds = wiring.kinds.map((kind, i) => kindController(wiring, kind, plans[i]!, events, metrics, sight))

  metrics.leader.set(wiring.leaderElection === undefined ? 1 : 0)

  const election: LeaderElection | undefined =
    wiring.leaderElection === undefined
      ? undefined
      : (electionSignal, onStartedLeading) => {
          const le = wiring.leaderElection!
          const elector = new LeaderElector({
            // Two tries fit in the renew deadline; a standby's hung read cannot delay its next look.
            store: createLeaseStore(wiring.kubeConfig, le.namespace, {requestTimeoutMs: Math.max(1_000, le.timings.renewDeadlineMs / 2)}),
            clock: systemClock,
            logger,
            identity: le.identity,
            name: le.id,
            namespace: le.namespace,
            releaseOnCancel: true,
            ...le.timings,
            onStartedLeading: (leaderSignal) => {
              metrics.leader.set(1)
              leaderSignal.addEventListener('abort', () => metrics.leader.set(0))
              onStartedLeading(leaderSignal)
            },
            onNewLeader: (identity) => logger.info({leader: identity}, 'leader observed'),
          })
          return elector.run(electionSignal)
        }

  const readyz = new Map([
    ['view', () => {
      const blind = kinds.filter((k) => !k.view.whole).map((k) => `${k.kind.name} (${k.view.reason})`)
      if (blind.length > 0) throw new Error(`view not whole for ${blind.join(', ')}`)
    }],
  ])
  const healthz = new Map([['engine', () => {}]])
  const manager = new Manager({logger, leaderElection: election})
  for (const server of observeServers({metricsAddress: wiring.metricsAddress, probeAddress: wiring.probeAddress, metrics: registry, healthz, readyz, logger})) {
    manager.add(server)
  }
  manager.add({name: 'sight', group: 'caches', start: (runSignal) => sight.run(runSignal)})
  for (const k of kinds) for (const cache of k.caches) manager.add(cache)
  for (const k of kinds) manager.add(k.engine)
  if (wiring.approvePoolletCsrs) for (const runnable of csrApprovalRunnables(wiring.kubeConfig, events, logger)) manager.add(runnable)
  logger.info(
    {kinds: wiring.kinds.map((k) => k.name), gracePeriodMs: wiring.gracePeriodMs, leaderElection: wiring.leaderElection !== undefined, sight: timings, watchGapToleranceMs: watchGapToleranceMs(wiring.gracePeriodMs)},
    'controller starting',
  )
  try {
    await manager.run(signal)
  } finally {
    await events.flush(EVENT_FLUSH_TIMEOUT_MS)
  }
}
