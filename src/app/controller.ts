/**
 * The controller's wiring: per pool kind a pool cache, a Lease cache and the lifecycle engine; leader
 * election, events, metrics and probes; all under one manager. The logic lives in src/core.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {systemClock, findCondition, LeaderElector, type LeaderElectionTimings, formatMaxUnhealthy, type MaxUnhealthy, PoolLifecycle, READY_CONDITION, type PoolKind, type Logger, type Pool} from '../core/index.ts'
import {EventRecorder} from '../kube/event-recorder.ts'
import {createLeaseStore, toLease} from '../kube/lease-store.ts'
import {createPoolStatusStore} from '../kube/pool-status-store.ts'
import {createLeaseCache, createPoolCache, leaseKey} from '../kube/resource-caches.ts'
import type {BindAddress} from '../observe/bind-address.ts'
import {observeServers} from '../observe/http-server.ts'
import {createControllerMetrics, createRegistry, NO_READY_STATUS, type ControllerMetrics} from '../observe/metrics.ts'
import {Manager} from '../runtime/manager.ts'
import type {LeaderElection, Runnable} from '../runtime/runnable.ts'

export const CONTROLLER_COMPONENT = 'ironpool-controller'

export interface ControllerWiring {
  kubeConfig: KubeConfig
  kinds: readonly PoolKind[]
  gracePeriodMs: number
  maxUnhealthy?: MaxUnhealthy
  leaderElection?: {namespace: string; id: string; identity: string; timings: LeaderElectionTimings}
  metricsAddress?: BindAddress
  probeAddress?: BindAddress
  logger: Logger
}

/** One kind's caches and engine, wired together. */
function kindController(wiring: ControllerWiring, kind: PoolKind, events: EventRecorder, metrics: ControllerMetrics) {
  const {kubeConfig, logger} = wiring
  const observer = (resource: string) => ({
    relist: (reason: string) => metrics.cache.relists.inc({resource, reason}),
    watchRestart: (reason: string) => metrics.cache.watchRestarts.inc({resource, reason}),
  })
  const pools = createPoolCache(kubeConfig, kind, {logger, observer})
  const leases = createLeaseCache(kubeConfig, kind, {logger, observer})
  const leaseOf = (name: string) => {
    const raw = leases.get(leaseKey(kind, name))
    return raw === undefined ? undefined : toLease(raw)
  }
  const lifecycle = new PoolLifecycle({
    kind,
    clock: systemClock,
    store: createPoolStatusStore(kubeConfig, kind),
    getPool: (name) => pools.get(name),
    getLease: leaseOf,
    events,
    logger: logger,
    gracePeriodMs: wiring.gracePeriodMs,
    maxUnhealthy: wiring.maxUnhealthy,
    observer: {
      marked: (report) => {
        metrics.poolsMarkedUnknown.inc({kind: kind.name})
        metrics.unknownWriteDelay.observe(report.delayMs / 1000)
      },
      breaker: (report) => {
        const tripped = report.transition === 'tripped'
        metrics.breakerOpen.set({kind: kind.name}, tripped ? 1 : 0)
        // The breaker concerns a kind, not a pool: its Event goes on the kind's CRD.
        events.record({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          name: `${kind.plural}.${kind.group}`,
          type: tripped ? 'Warning' : 'Normal',
          reason: tripped ? 'MaxUnhealthyExceeded' : 'MaxUnhealthyRecovered',
          message: tripped
            ? `${report.unhealthy} of ${report.total} ${kind.plural} stale at once, more than --max-unhealthy=${formatMaxUnhealthy(report.limit)}: marking none Unknown`
            : `${report.unhealthy} of ${report.total} ${kind.plural} stale, within --max-unhealthy=${formatMaxUnhealthy(report.limit)}: marking resumed`,
        })
      },
    },
  })
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
  const whole = () => pools.isWhole() && leases.isWhole()
  const onHealth = () => lifecycle.setViewWhole(whole())
  pools.onHealth(onHealth)
  leases.onHealth(onHealth)

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
      lifecycle.setLeader(true)
      await new Promise((resolve) => signal.addEventListener('abort', resolve, {once: true}))
      lifecycle.setLeader(false)
      await lifecycle.close()
    },
  }
  return {kind, caches, engine, whole}
}

/** Runs the controller until signal aborts; rejects on a failure, or with LeadershipLostError. */
export async function runController(wiring: ControllerWiring, signal: AbortSignal): Promise<void> {
  const {logger} = wiring
  const registry = createRegistry()
  const metrics = createControllerMetrics(registry, wiring.kinds.map((k) => k.name))
  const events = new EventRecorder({kubeConfig: wiring.kubeConfig, clock: systemClock, logger, component: CONTROLLER_COMPONENT})
  const kinds = wiring.kinds.map((kind) => kindController(wiring, kind, events, metrics))

  metrics.leader.set(wiring.leaderElection === undefined ? 1 : 0)

  const election: LeaderElection | undefined =
    wiring.leaderElection === undefined
      ? undefined
      : (electionSignal, onStartedLeading) => {
          const le = wiring.leaderElection!
          const elector = new LeaderElector({
            store: createLeaseStore(wiring.kubeConfig, le.namespace),
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
    ['caches', () => {
      const broken = kinds.filter((k) => !k.whole()).map((k) => k.kind.name)
      if (broken.length > 0) throw new Error(`watch caches not whole for ${broken.join(', ')}`)
    }],
  ])
  const healthz = new Map([['engine', () => {}]])
  const manager = new Manager({logger, leaderElection: election})
  for (const server of observeServers({metricsAddress: wiring.metricsAddress, probeAddress: wiring.probeAddress, metrics: registry, healthz, readyz, logger})) {
    manager.add(server)
  }
  for (const k of kinds) for (const cache of k.caches) manager.add(cache)
  for (const k of kinds) manager.add(k.engine)
  logger.info({kinds: wiring.kinds.map((k) => k.name), gracePeriodMs: wiring.gracePeriodMs, leaderElection: wiring.leaderElection !== undefined}, 'controller starting')
  try {
    await manager.run(signal)
  } finally {
    await events.flush()
  }
}
