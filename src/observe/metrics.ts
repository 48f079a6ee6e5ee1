/**
 * Prometheus metrics, on a Registry of their own (never prom-client's global one), so that tests and
 * two components in one process never collide over a name. Each command registers only its own group;
 * the handles are typed, so a wrong label name is a compile error rather than a missing series.
 * Series with known label values are created at zero up front, as controller-runtime does, so that
 * rate() and absent() work before the first event.
 */
import {Counter, Gauge, Histogram, Registry, collectDefaultMetrics} from 'prom-client'
import {BLIND_REASONS, CONDITION_STATUSES, type PoolKindName} from '../core/index.ts'

const PREFIX = 'ironpool_'

/**
 * How often the event-loop-delay monitor behind nodejs_eventloop_lag_{min,max,mean,p50,p90,p99}_seconds
 * samples, unless a component says otherwise. prom-client's default, 10 ms, is a timer that wakes a
 * hundred times a second: 3.3–4.3 ms of CPU a second in an otherwise idle process, 33–43 ms per
 * poollet tick at the default 10 s interval, nearly all a poollet spent. The monitor records how late
 * each of its wakes came, so a stall that spans a wake is measured whole at any resolution; a finer
 * one only catches shorter stalls. The controller's deadlines are seconds: once a second (0.06 ms of
 * CPU a second in an idle Node 24 process on this machine: 10 ms 3.32, 100 ms 0.54, 1 s 0.06, none
 * 0.005 ms/s). The poollet samples once a heartbeat ({@link poolletEventLoopPrecisionMs}).
 */
export const EVENT_LOOP_MONITORING_PRECISION_MS = 1000

/**
 * A poollet's monitor wakes once per heartbeat interval (at least once a second): what it guards is
 * the heartbeat, and a stall too short to span a wake is one the heartbeat rides out. Each wake of a
 * sleeping process cost ~0.1 ms of CPU, a whole millisecond per 10 s tick at once a second (10 poollets
 * side by side on one control plane, 10 minutes: 6.51 against 5.48 ms a tick; bench/README.md, issue 21).
 */
export function poolletEventLoopPrecisionMs(heartbeatIntervalMs: number): number {
  return Math.max(EVENT_LOOP_MONITORING_PRECISION_MS, heartbeatIntervalMs)
}

export interface RegistryOptions {
  /** The event-loop-delay monitor's resolution. Default {@link EVENT_LOOP_MONITORING_PRECISION_MS}. */
  eventLoopMonitoringPrecisionMs?: number
}

/**
 * A fresh registry with the default process and Node.js metrics (CPU, memory, event loop lag, GC).
 * Those keep their standard unprefixed names (process_*, nodejs_*), which stock dashboards expect.
 */
export function createRegistry(options: RegistryOptions = {}): Registry {
  const registry = new Registry()
  collectDefaultMetrics({register: registry, eventLoopMonitoringPrecision: options.eventLoopMonitoringPrecisionMs ?? EVENT_LOOP_MONITORING_PRECISION_MS})
  // Gauges that prom-client names like counters (promtool check metrics: non-counter metrics should not
  // have "_total" suffix); each is the sum of the same gauge by type (nodejs_active_handles{type}, ...).
  for (const name of MISNAMED_DEFAULT_METRICS) registry.removeSingleMetric(name)
  return registry
}

const MISNAMED_DEFAULT_METRICS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']

/** Probe and lease write latency: a probe deadline is a few seconds, a Lease write tens of ms. */
const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export interface PoolletMetrics {
  probeDuration: Histogram<'kind'>
  probeFailures: Counter<'kind'>
  leaseRenewDuration: Histogram
  leaseRenewFailures: Counter
  readyTransitions: Counter<'kind' | 'status'>
  /** Unix seconds of the last Lease write that landed. */
  lastRenewTime: Gauge
  /** Renewals of the client certificate that failed (each is retried after a growing delay). */
  certificateRotationFailures: Counter
  /** 1 while the poollet yields the pool's Lease to another live holder (it renews nothing then), else 0. */
  leaseYielded: Gauge
}

export interface PoolletMetricSources {
  /**
   * The notAfter (wall ms) of the client certificate in use, read at each scrape; given only when the
   * poollet authenticates with one (then ironpool_poollet_certificate_expiration_timestamp_seconds is exported).
   */
  certificateNotAfter?: () => number | undefined
}

export function createPoolletMetrics(registry: Registry, kind: PoolKindName, sources: PoolletMetricSources = {}): PoolletMetrics {
  const registers = [registry]
  const metrics: PoolletMetrics = {
    probeDuration: new Histogram({name: `${PREFIX}poollet_probe_duration_seconds`, help: 'Duration of IRI runtime probes, failed ones included.', labelNames: ['kind'], buckets: CALL_BUCKETS, registers}),
    probeFailures: new Counter({name: `${PREFIX}poollet_probe_failures_total`, help: 'IRI runtime probes that failed or missed their deadline.', labelNames: ['kind'], registers}),
    leaseRenewDuration: new Histogram({name: `${PREFIX}poollet_lease_renew_duration_seconds`, help: 'Duration of Lease renewals, retries included.', buckets: CALL_BUCKETS, registers}),
    leaseRenewFailures: new Counter({name: `${PREFIX}poollet_lease_renew_failures_total`, help: 'Lease renewals that failed after their bounded retries.', registers}),
    readyTransitions: new Counter({name: `${PREFIX}poollet_ready_transitions_total`, help: 'Writes that changed the pool Ready condition, by new status.', labelNames: ['kind', 'status'], registers}),
    lastRenewTime: new Gauge({name: `${PREFIX}poollet_last_successful_renew_timestamp_seconds`, help: 'Unix time of the last successful Lease renewal.', registers}),
    certificateRotationFailures: new Counter({name: `${PREFIX}poollet_certificate_rotation_failures_total`, help: 'Client certificate renewals that failed (each is retried after a growing delay).', registers}),
    leaseYielded: new Gauge({name: `${PREFIX}poollet_lease_yielded`, help: 'Whether the poollet yields the pool Lease to another live holder and renews nothing (1) or not (0).', registers}),
  }
  metrics.certificateRotationFailures.inc(0)
  metrics.leaseYielded.set(0)
  const notAfter = sources.certificateNotAfter
  // As the kubelet's kubelet_certificate_manager_client_expiration_seconds, in base units and named as a
  // timestamp. Registered only for a poollet that presents a certificate: prom-client would report an
  // unset unlabelled gauge as 0 (expired in 1970). Unreadable at a scrape, it keeps the last value.
  if (notAfter !== undefined) {
    new Gauge({
      name: `${PREFIX}poollet_certificate_expiration_timestamp_seconds`,
      help: 'Unix time at which the client certificate the poollet authenticates with expires.',
      registers,
      collect() {
        const ms = notAfter()
        if (ms !== undefined) this.set(ms / 1000)
      },
    })
  }
  metrics.probeDuration.zero({kind})
  metrics.probeFailures.inc({kind}, 0)
  metrics.leaseRenewFailures.inc(0)
  for (const status of CONDITION_STATUSES) metrics.readyTransitions.inc({kind, status}, 0)
  return metrics
}

/** The watch cache's own counters; in the controller's group, and the poollet's if it uses the cache. */
export interface CacheMetrics {
  relists: Counter<'resource' | 'reason'>
  watchRestarts: Counter<'resource' | 'reason'>
}

export function createCacheMetrics(registry: Registry): CacheMetrics {
  const registers = [registry]
  return {
    relists: new Counter({name: `${PREFIX}cache_relists_total`, help: 'Full relists of a watched resource, by reason (start, gone, periodic, ...).', labelNames: ['resource', 'reason'], registers}),
    watchRestarts: new Counter({name: `${PREFIX}cache_watch_restarts_total`, help: 'Watch streams reopened, by reason (closed, error, silent, ...).', labelNames: ['resource', 'reason'], registers}),
  }
}

/**
 * From a pool's deadline to its Unknown write: the target is p99 under 1 s, so the buckets are fine
 * below a second and coarse above it, where only an outage or a retry would land.
 */
const UNKNOWN_DELAY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 2, 5, 10, 30]

export interface ControllerMetrics {
  /** Pools seen, by kind and Ready status ('' when a pool has no Ready yet is written as "None"). */
  pools: Gauge<'kind' | 'status'>
  poolsMarkedUnknown: Counter<'kind'>
  /** --dry-run: the Ready=Unknown writes it would have made (it makes none). */
  dryRunMarks: Counter<'kind'>
  /** Groups of pools (a zone, a host, the kind) that fell silent together, each spell once. */
  correlatedSilences: Counter<'kind' | 'by' | 'group'>
  unknownWriteDelay: Histogram
  leaseEvents: Counter
  /** 1 while the kind's breaker holds marks back, else 0. */
  breakerOpen: Gauge<'kind'>
  /** The per-zone breaker: whether it holds a zone (1) or not (0); a zone appears once its breaker first trips. */
  zoneBreakerOpen: Gauge<'kind' | 'zone'>
  /** 1 while this replica leads (or runs without leader election), else 0. */
  leader: Gauge
  /** 1 while the kind's view is whole (the controller may judge), else 0. */
  viewWhole: Gauge<'kind'>
  /** 1 on the reason the kind's current blind spell began with while its view is not whole; 0 on every other reason, and on all when whole. */
  viewBlind: Gauge<'kind' | 'reason'>
  /** Seconds the kind's view was not whole, by reason (paused, api-unanswered, watch-gap, not-synced). */
  blindSeconds: Counter<'kind' | 'reason'>
  /** Spells of blindness, by the reason each began with. */
  blindSpells: Counter<'kind' | 'reason'>
  /** The controller's API probe (a quorum read): its latency, and its failures. */
  apiProbeDuration: Histogram
  apiProbeFailures: Counter
  /** Confirming reads before a mark, by outcome: silent (marked), renewed (not marked: progress), failed. */
  confirmReads: Counter<'kind' | 'outcome'>
  /** Stale pools that could not be marked (the API has no conditions for the kind, or did not keep the write), by reason. */
  staleUnmarkable: Counter<'kind' | 'reason'>
  /**
   * Pools past their grace period (counting only time the view was whole) and not marked Unknown:
   * held by blindness, the breaker, a confirm or write pending or retrying, or unmarkable. Read at
   * each scrape from the source each kind registers with {@link ControllerMetrics.watchOverdue}.
   */
  poolsOverdue: Gauge<'kind'>
  /** How far past its deadline the oldest such pool is, in seconds; 0 when none. */
  oldestOverdueSeconds: Gauge<'kind'>
  /** Ready=Unknown writes that failed (each is retried while the pool stays silent). */
  unknownWriteFailures: Counter<'kind'>
  /** Registers the kind's source of the two overdue gauges (the engine's count, read at scrape). */
  watchOverdue(kind: PoolKindName, source: () => OverdueStats): void
  cache: CacheMetrics
}

/** Pools overdue but not marked, and the oldest one's age past its deadline. */
export interface OverdueStats {
  pools: number
  oldestMs: number
}

/** Label value for a pool without a Ready condition. */
export const NO_READY_STATUS = 'None'

export function createControllerMetrics(registry: Registry, kinds: readonly PoolKindName[]): ControllerMetrics {
  const registers = [registry]
  const overdueSources = new Map<PoolKindName, () => OverdueStats>()
  const overdue = () => [...overdueSources].map(([kind, source]) => ({kind, stats: source()}))
  const metrics: ControllerMetrics = {
    pools: new Gauge({name: `${PREFIX}controller_pools`, help: 'Pools in the cache, by kind and Ready status.', labelNames: ['kind', 'status'], registers}),
    poolsMarkedUnknown: new Counter({name: `${PREFIX}controller_pools_marked_unknown_total`, help: 'Ready=Unknown writes by this controller.', labelNames: ['kind'], registers}),
    correlatedSilences: new Counter({name: `${PREFIX}controller_correlated_silences_total`, help: 'Groups of pools that went silent within one window (by zone label, Lease holder host, or the kind), each spell counted once; group is the zone or host ("" for the kind).', labelNames: ['kind', 'by', 'group'], registers}),
    dryRunMarks: new Counter({name: `${PREFIX}controller_dry_run_marks_total`, help: 'Ready=Unknown writes a controller run with --dry-run would have made (it wrote none), by kind.', labelNames: ['kind'], registers}),
    unknownWriteDelay: new Histogram({name: `${PREFIX}controller_unknown_write_delay_seconds`, help: 'Delay from a pool grace deadline to its Ready=Unknown write landing.', buckets: UNKNOWN_DELAY_BUCKETS, registers}),
    leaseEvents: new Counter({name: `${PREFIX}controller_lease_events_total`, help: 'Lease watch events seen.', registers}),
    zoneBreakerOpen: new Gauge({name: `${PREFIX}controller_zone_breaker_open`, help: 'Whether the per-zone --max-unhealthy breaker holds the zone\'s Unknown writes back (1) or not (0), by kind and zone.', labelNames: ['kind', 'zone'], registers}),
    breakerOpen: new Gauge({name: `${PREFIX}controller_breaker_open`, help: 'Whether the --max-unhealthy breaker holds Unknown writes back (1) or not (0), by kind.', labelNames: ['kind'], registers}),
    leader: new Gauge({name: `${PREFIX}controller_leader`, help: 'Whether this replica is the leader (1) or not (0).', registers}),
    viewWhole: new Gauge({name: `${PREFIX}controller_view_whole`, help: 'Whether the kind\'s view is whole (1: the controller may mark pools) or not (0).', labelNames: ['kind'], registers}),
    viewBlind: new Gauge({name: `${PREFIX}controller_view_blind`, help: 'Whether the kind\'s view is not whole (1), on the reason its blind spell began with; 0 otherwise.', labelNames: ['kind', 'reason'], registers}),
    blindSeconds: new Counter({name: `${PREFIX}controller_blind_seconds_total`, help: 'Seconds the kind\'s view was not whole, by reason; counted when the reason changes or the spell ends.', labelNames: ['kind', 'reason'], registers}),
    blindSpells: new Counter({name: `${PREFIX}controller_blind_spells_total`, help: 'Spells during which the kind\'s view was not whole, by the reason each began with.', labelNames: ['kind', 'reason'], registers}),
    apiProbeDuration: new Histogram({name: `${PREFIX}controller_api_probe_duration_seconds`, help: 'Duration of the controller\'s API probe (a quorum read), failed ones included.', buckets: CALL_BUCKETS, registers}),
    apiProbeFailures: new Counter({name: `${PREFIX}controller_api_probe_failures_total`, help: 'API probes that failed or missed their deadline.', registers}),
    confirmReads: new Counter({name: `${PREFIX}controller_confirm_reads_total`, help: 'Fresh Lease reads before a mark, by outcome (silent, renewed, failed).', labelNames: ['kind', 'outcome'], registers}),
    staleUnmarkable: new Counter({name: `${PREFIX}controller_stale_unmarkable_total`, help: 'Pools found stale that could not be marked Unknown, by reason (no-conditions: the API has no conditions for the kind; not-held: the API did not keep the write).', labelNames: ['kind', 'reason'], registers}),
    poolsOverdue: new Gauge({
      name: `${PREFIX}controller_pools_overdue`,
      help: 'Pools whose silence has passed the grace period (counting only time the view was whole) and that are not marked Unknown, by kind.',
      labelNames: ['kind'],
      registers,
      collect() {
        for (const {kind, stats} of overdue()) this.set({kind}, stats.pools)
      },
    }),
    oldestOverdueSeconds: new Gauge({
      name: `${PREFIX}controller_oldest_overdue_seconds`,
      help: 'How far past its deadline the oldest overdue, unmarked pool is, in seconds (0 when none), by kind.',
      labelNames: ['kind'],
      registers,
      collect() {
        for (const {kind, stats} of overdue()) this.set({kind}, stats.oldestMs / 1000)
      },
    }),
    unknownWriteFailures: new Counter({name: `${PREFIX}controller_unknown_write_failures_total`, help: 'Ready=Unknown writes that failed (and will be retried), by kind.', labelNames: ['kind'], registers}),
    watchOverdue: (kind, source) => {
      overdueSources.set(kind, source)
    },
    cache: createCacheMetrics(registry),
  }
  metrics.apiProbeFailures.inc(0)
  metrics.leaseEvents.inc(0)
  metrics.leader.set(0)
  for (const kind of kinds) {
    metrics.poolsMarkedUnknown.inc({kind}, 0)
    metrics.dryRunMarks.inc({kind}, 0)
    metrics.breakerOpen.set({kind}, 0)
    metrics.poolsOverdue.set({kind}, 0)
    metrics.oldestOverdueSeconds.set({kind}, 0)
    metrics.unknownWriteFailures.inc({kind}, 0)
    metrics.viewWhole.set({kind}, 0)
    for (const reason of BLIND_REASONS) {
      metrics.viewBlind.set({kind, reason}, 0)
      metrics.blindSeconds.inc({kind, reason}, 0)
      metrics.blindSpells.inc({kind, reason}, 0)
    }
    for (const outcome of ['silent', 'renewed', 'failed']) metrics.confirmReads.inc({kind, outcome}, 0)
    for (const reason of ['no-conditions', 'not-held']) metrics.staleUnmarkable.inc({kind, reason}, 0)
    for (const status of [...CONDITION_STATUSES, NO_READY_STATUS]) metrics.pools.set({kind, status}, 0)
  }
  return metrics
}

/** The opt-in CSR approver's (`--approve-poollet-csrs`): registered only when it runs, so its alert watches only replicas that approve. */
export interface CsrApproverMetrics {
  /** 1 while the approver's CSR cache is whole (it sees every client-certificate CSR), else 0. */
  cacheWhole: Gauge
  /** Decisions about poollets' CSRs: approved, or refused by which rule. */
  decisions: Counter<'outcome'>
}

export function createCsrApproverMetrics(registry: Registry): CsrApproverMetrics {
  const registers = [registry]
  const metrics: CsrApproverMetrics = {
    cacheWhole: new Gauge({name: `${PREFIX}controller_csr_cache_whole`, help: 'Whether the CSR approver\'s cache of client-certificate CSRs is whole (1: it can approve) or not (0).', registers}),
    decisions: new Counter({name: `${PREFIX}controller_csr_decisions_total`, help: 'Decisions of the CSR approver about poollets\' CSRs, by outcome (approved, or the rule that refused it).', labelNames: ['outcome'], registers}),
  }
  metrics.cacheWhole.set(0)
  metrics.decisions.inc({outcome: 'approved'}, 0)
  return metrics
}
