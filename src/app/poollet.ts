/**
 * The poollet's wiring: the IRI runtime probe, the Lease and pool stores on client-node, the heartbeat
 * engine, metrics, all under one manager. The command parses and validates; this assembles; the logic
 * lives in src/core.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {systemClock, Heartbeat, type PoolletOptions, type Logger} from '../core/index.ts'
import {createRuntimeProbe} from '../iri/index.ts'
import {EventRecorder} from '../kube/stores/event-recorder.ts'
import {clientCertificateNotAfter} from '../kube/http/client-certificate.ts'
import {dropConnections} from '../kube/http/kubeconfig.ts'
import {createLeaseStore} from '../kube/stores/lease-store.ts'
import {createPoolStatusStore} from '../kube/stores/pool-status-store.ts'
import {createPoolCache} from '../kube/watch/caches/resource-caches.ts'
import {describeWritePlan, learnWritePlan} from '../kube/stores/served-schema.ts'
import type {BindAddress} from '../observe/bind-address.ts'
import type {HealthChecks} from '../observe/healthz.ts'
import {ObserveServer} from '../observe/http-server.ts'
import {createPoolletMetrics, createRegistry, poolletEventLoopPrecisionMs} from '../observe/metrics.ts'
import {recordTick} from '../observe/poollet-tick-metrics.ts'
import {Manager} from '../runtime/manager.ts'
import type {Runnable} from '../runtime/runnable.ts'

export const POOLLET_COMPONENT = 'ironpool-poollet'
/** At exit, Events still in flight get this long; shutdown stays within a few seconds. */
const EVENT_FLUSH_TIMEOUT_MS = 2_000

export interface PoolletWiring {
  options: PoolletOptions
  kubeConfig: KubeConfig
  /** The client certificate's rotation (poollet-kubeconfig.ts), when on, and its failures. */
  rotation?: Runnable
  onRotationFailure?: (listener: () => void) => void
  runtimeEndpoint: string
  holderIdentity: string
  metricsAddress?: BindAddress
  logger: Logger
}

/** Runs the poollet until signal aborts; rejects when a part of it fails for good. */
export async function runPoollet(wiring: PoolletWiring, signal: AbortSignal): Promise<void> {
  const {options, kubeConfig, logger} = wiring
  const kind = options.kind
  const probe = createRuntimeProbe(kind, wiring.runtimeEndpoint, {timeoutMs: options.heartbeatStatusTimeoutMs})
  const registry = createRegistry({eventLoopMonitoringPrecisionMs: poolletEventLoopPrecisionMs(options.heartbeatIntervalMs)})
  // The certificate kubeConfig presents, read at each scrape: rotation switches it in place.
  const certificateNotAfter = clientCertificateNotAfter(kubeConfig) === undefined ? undefined : () => clientCertificateNotAfter(kubeConfig)
  const metrics = createPoolletMetrics(registry, kind.name, {certificateNotAfter})
  wiring.onRotationFailure?.(() => metrics.certificateRotationFailures.inc())
  // A watch on this one pool: a steady-state tick then reads nothing. Trusted only while whole; until
  // then (or if the watch is refused) the heartbeat reads the pool itself, so the Lease never waits on it.
  const poolCache = createPoolCache(kubeConfig, kind, {logger, fieldSelector: `metadata.name=${options.poolName}`})
  // As the kubelet bounds its heartbeat client: no request may outlast a beat or the Lease.
  const requestTimeoutMs = Math.min(options.heartbeatIntervalMs, options.heartbeatLeaseDurationMs)
  const events = new EventRecorder({kubeConfig, clock: systemClock, logger, component: POOLLET_COMPONENT})
  // What the API can hold of the pool's Ready, learnt once; said once, here (IronCore's BucketPool: nothing).
  const plan = await learnWritePlan(kubeConfig, kind, {logger, requestTimeoutMs})
  if (plan.conditions) logger.info({conditionFields: plan.conditionFields}, `write plan: ${describeWritePlan(kind, plan)}`)
  else logger.warn({}, `write plan: ${describeWritePlan(kind, plan)}`)
  const heartbeat = new Heartbeat({
    plan,
    events,
    getPool: () => (poolCache.isWhole() ? poolCache.get(options.poolName) : undefined),
    kind,
    poolName: options.poolName,
    holderIdentity: wiring.holderIdentity,
    probe,
    leases: createLeaseStore(kubeConfig, kind.leaseNamespace, {requestTimeoutMs}),
    pools: createPoolStatusStore(kubeConfig, kind, {requestTimeoutMs, logger}),
    clock: systemClock,
    logger,
    intervalMs: options.heartbeatIntervalMs,
    leaseDurationMs: options.heartbeatLeaseDurationMs,
    statusTimeoutMs: options.heartbeatStatusTimeoutMs,
    onLeaseRenewalFailed: () => {
      const closed = dropConnections(kubeConfig)
      logger.info({pools: closed}, 'Lease renewal failed: pooled API connections dropped, the next request dials afresh')
    },
  })

  const manager = new Manager({logger})
  // Served beside /metrics: /readyz fails while the poollet yields the pool's Lease to another live
  // holder (it beats for nobody then), so a rollout or an alert sees it.
  const readyz: HealthChecks = new Map([
    [
      'lease',
      () => {
        const holder = heartbeat.yieldedTo()
        if (holder !== undefined) throw new Error(`Lease ${kind.leaseNamespace}/${options.poolName} yielded to ${holder}, which renews it`)
      },
    ],
  ])
  if (wiring.metricsAddress !== undefined) manager.add(new ObserveServer({name: 'metrics', address: wiring.metricsAddress, metrics: registry, healthz: new Map(), readyz, logger}))
  // Not in the 'caches' group: nothing waits for it to sync.
  manager.add({name: 'pool cache', start: (cacheSignal) => poolCache.start(cacheSignal)})
  if (wiring.rotation !== undefined) manager.add(wiring.rotation)
  manager.add({
    name: 'heartbeat',
    start: (runSignal) => heartbeat.run(runSignal, (result) => recordTick(metrics, kind.name, result, systemClock.wall())),
  })
  logger.info(
    {endpoint: wiring.runtimeEndpoint, holder: wiring.holderIdentity, interval: options.heartbeatIntervalMs, leaseDuration: options.heartbeatLeaseDurationMs},
    'poollet starting',
  )
  try {
    await manager.run(signal)
  } finally {
    probe.close()
    await events.flush(EVENT_FLUSH_TIMEOUT_MS)
  }
}
