/**
 * The controller's wiring: per pool kind its caches, view and engine (kind-controller.ts), one sight
 * shared by all kinds, leader election, events, metrics and probes; all under one manager. The logic
 * lives in src/core.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {systemClock, sleep, CONTROLLER_DEFAULTS, DEFAULT_REQUEST_LIMITS, LeaderElector, type LeaderElectionTimings, type MaxUnhealthy, RequestLimiter, type RequestLimits, Sight, sightTimings, writeProbe, type PoolKind, type Logger} from '../core/index.ts'
import {createApiProbe, type ApiProbe} from '../kube/stores/api-probe.ts'
import {EventRecorder} from '../kube/stores/event-recorder.ts'
import {describeWritePlan, learnWritePlan} from '../kube/stores/served-schema.ts'
import {kindController, watchGapToleranceMs} from './kind-controller.ts'
import {createLeaseStore} from '../kube/stores/lease-store.ts'
import type {BindAddress} from '../observe/bind-address.ts'
import type {HealthCheck} from '../observe/healthz.ts'
import {observeServers} from '../observe/http-server.ts'
import {createControllerMetrics, createRegistry, type ControllerMetrics} from '../observe/metrics.ts'
import {Manager} from '../runtime/manager.ts'
import {createOversizedMetrics} from './oversized-reports.ts'
import type {LeaderElection} from '../runtime/runnable.ts'

export const CONTROLLER_COMPONENT = 'ironpool-controller'
/** The Events of a dry run name it as their source, so a report tells its would-marks from the marks. */
export const DRY_RUN_COMPONENT = 'ironpool-controller-dry-run'
/** At exit, Events still in flight get this long; shutdown stays within a few seconds. */
export const EVENT_FLUSH_TIMEOUT_MS = 2_000

export interface ControllerWiring {
  kubeConfig: KubeConfig
  kinds: readonly PoolKind[]
  gracePeriodMs: number
  maxUnhealthy?: MaxUnhealthy
  leaderElection?: {namespace: string; id: string; identity: string; timings: LeaderElectionTimings}
  /** Where the sight's write probe renews its Lease without leader election. Default: the leader-election namespace's default. */
  writeProbeNamespace?: string
  metricsAddress?: BindAddress
  probeAddress?: BindAddress
  /** `--metrics-secure`: /metrics over TLS behind TokenReview and SubjectAccessReview (secure-metrics.ts); certDir from `--metrics-cert-dir`. */
  metricsSecure?: {certDir?: string}
  /** `--approve-poollet-csrs`: approve poollets' client certificates by IronCore's rules (csr-approval.ts). */
  approvePoolletCsrs?: boolean
  /** `--dry-run`: judge exactly as otherwise, write no pool (kind-controller.ts). */
  dryRun?: boolean
  /** Who judges, as verdict records name it: the leader-election identity, else the host name. */
  identity: string
  /** --zone-label: the labels whose value is a pool's zone (correlated silence). */
  zoneLabels?: readonly string[]
  /** --qps, --burst: the bound on confirming reads and Unknown writes of all kinds. Default DEFAULT_REQUEST_LIMITS. */
  requestLimits?: RequestLimits
  logger: Logger
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
  const events = new EventRecorder({kubeConfig: wiring.kubeConfig, clock: systemClock, logger, component: wiring.dryRun ? DRY_RUN_COMPONENT : CONTROLLER_COMPONENT})
  const timings = sightTimings(wiring.gracePeriodMs)
  const probeNamespace = wiring.kinds[0]?.leaseNamespace ?? 'default'
  // The write probe renews a Lease of the controller's own where its RBAC lets it write Leases: the
  // leader-election namespace (whether or not it elects), so that refused writes are blindness too.
  const writeProbeNamespace = wiring.leaderElection?.namespace ?? wiring.writeProbeNamespace ?? CONTROLLER_DEFAULTS.leaderElectionNamespace
  const sight = new Sight({
    clock: systemClock,
    logger,
    probe: measuredProbe(createApiProbe(wiring.kubeConfig, probeNamespace, timings.probeTimeoutMs), metrics),
    ...timings,
    writeProbe: writeProbe({
      leases: createLeaseStore(wiring.kubeConfig, writeProbeNamespace, {requestTimeoutMs: timings.writeProbeTimeoutMs}),
      namespace: writeProbeNamespace,
      holderIdentity: wiring.leaderElection?.identity ?? CONTROLLER_COMPONENT,
      clock: systemClock,
      // A dry run proves its writes on a Lease of its own: it writes nothing the controller in charge owns.
      ...(wiring.dryRun ? {name: CONTROLLER_DEFAULTS.dryRunWriteProbeLease} : {}),
    }),
  })
  // What each kind's API can hold of a Ready condition, learnt once (IronCore's BucketPool: nothing).
  const plans = await Promise.all(wiring.kinds.map((kind) => learnWritePlan(wiring.kubeConfig, kind, {logger})))
  wiring.kinds.forEach((kind, i) => logger.info({kind: kind.name}, `write plan: ${describeWritePlan(kind, plans[i]!)}`))
  // One bound on the confirming reads and writes of all kinds: one client, one flow for APF.
  const requestLimits = wiring.requestLimits ?? DEFAULT_REQUEST_LIMITS
  const limiter = new RequestLimiter(systemClock, requestLimits)
  const oversizedMetrics = createOversizedMetrics(registry)
  const kinds = wiring.kinds.map((kind, i) => kindController({...wiring, limiter, oversizedMetrics}, kind, plans[i]!, events, metrics, sight))

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

  const readyz = new Map<string, HealthCheck>([
    ['view', () => {
      const blind = kinds.filter((k) => !k.view.whole).map((k) => `${k.kind.name} (${k.view.reason})`)
      if (blind.length > 0) throw new Error(`view not whole for ${blind.join(', ')}`)
    }],
  ])
  const healthz = new Map([['engine', () => {}]])
  // A replica campaigns only once its own evidence is a grace period old: a grace period of whole
  // view (blind time not counted) since its grace periods last started afresh, before its first
  // campaign and before each after a lost leadership. A new leader keeps what its process saw as a
  // standby; one that has seen nothing yet would take a grace period to judge anyway. So a restarted
  // replica does not win over a standby that has watched for long (the simulator's seed 1120: a fresh
  // process winning after every stall held a dead pool past its bound; seed 50740: one restarted
  // while writes were refused had waited a grace period, blind all along). Leadership comes a grace
  // period after start; the first marks do not.
  const warmUpTickMs = sightTimings(wiring.gracePeriodMs).tickMs
  const campaignWhen = async (runSignal: AbortSignal) => {
    while (!kinds.every((k) => k.lifecycle.evidenceAgeMs() >= wiring.gracePeriodMs)) await sleep(systemClock, warmUpTickMs, runSignal)
  }
  const manager = new Manager({logger, leaderElection: election, campaignWhen})
  const secure = wiring.metricsSecure === undefined || wiring.metricsAddress === undefined ? undefined : await (await import('./secure-metrics.ts')).secureMetrics(wiring.kubeConfig, wiring.metricsSecure.certDir, logger)
  for (const server of observeServers({metricsAddress: wiring.metricsAddress, probeAddress: wiring.probeAddress, metrics: registry, healthz, readyz, logger, ...(secure !== undefined && {secureMetrics: secure})})) {
    manager.add(server)
  }
  manager.add({name: 'sight', group: 'caches', start: (runSignal) => sight.run(runSignal)})
  for (const k of kinds) for (const cache of k.caches) manager.add(cache)
  for (const k of kinds) manager.add(k.engine)
  if (wiring.approvePoolletCsrs) {
    // The approver's X.509 parsing (half a megabyte of code) loads only when it is asked for.
    const {csrApproval} = await import('./csr-approval.ts')
    const approval = csrApproval({kubeConfig: wiring.kubeConfig, events, logger, clock: systemClock, registry, cacheMetrics: metrics.cache})
    for (const runnable of approval.runnables) manager.add(runnable)
    readyz.set('csr-cache', approval.readyz)
  }
  logger.info(
    {kinds: wiring.kinds.map((k) => k.name), zoneLabels: wiring.zoneLabels, dryRun: wiring.dryRun ?? false, identity: wiring.identity, gracePeriodMs: wiring.gracePeriodMs, leaderElection: wiring.leaderElection !== undefined, sight: timings, requestLimits, watchGapToleranceMs: watchGapToleranceMs(wiring.gracePeriodMs)},
    'controller starting',
  )
  try {
    await manager.run(signal)
  } finally {
    await events.flush(EVENT_FLUSH_TIMEOUT_MS)
  }
}
