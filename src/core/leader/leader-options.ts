/**
 * Leader election's settings: the defaults, in this one place, and client-go's rules that refuse a
 * start (NewLeaderElector). Messages name the flags, so the command can show them as they are.
 */
import {formatDuration} from '../durations.ts'
import {isDnsSubdomain} from '../heartbeat/poollet-options.ts'
import type {Clock} from '../clock.ts'
import type {LeaseStore, Logger} from '../ports.ts'

/**
 * client-go's core-client numbers, which kube-controller-manager and controller-runtime use as well:
 * a standby takes over no earlier than 15 s after it last saw the Lease change; the leader gives up
 * 10 s after its last renewal, 5 s before anyone may take over, a margin for clock-rate drift and API
 * latency; 2 s between tries gives the leader four more tries before its deadline.
 */
export const LEADER_ELECTION_DEFAULTS = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
} as const

/**
 * client-go's JitterFactor: a standby waits retryPeriod × [1, 2.2) between tries to acquire, so that
 * standbys started together do not all hit the API server in the same instant. The leader's renewals are
 * not jittered (nor are they in client-go): its deadline, not a crowd, sets their pace.
 */
export const LEADER_JITTER_FACTOR = 1.2

/**
 * The flags the settings come from. The namespace and id are the issue's; the three durations spell
 * kube-controller-manager's `--leader-elect-*` flags, which operators already know.
 */
export const LEADER_ELECTION_FLAGS = {
  leaseDuration: '--leader-elect-lease-duration',
  renewDeadline: '--leader-elect-renew-deadline',
  retryPeriod: '--leader-elect-retry-period',
  namespace: '--leader-election-namespace',
  id: '--leader-election-id',
} as const

export interface LeaderElectionTimings {
  leaseDurationMs: number
  renewDeadlineMs: number
  retryPeriodMs: number
}

/** Where the Lease lives: coordination.k8s.io/v1 Lease `<namespace>/<name>`. */
export interface LeaderLeaseRef {
  name: string
  namespace: string
}

/** The elector's options; absent timings take {@link LEADER_ELECTION_DEFAULTS}. */
export interface LeaderElectorOptions extends Partial<LeaderElectionTimings> {
  /** The Leases of the election's namespace. */
  store: LeaseStore
  clock: Clock
  logger: Logger
  /** Unique per replica and per process life (e.g. pod name and a UUID). */
  identity: string
  name: string
  namespace: string
  /**
   * On a clean stop while leading, hand the Lease back (no holder) so a standby takes over on its next
   * try instead of after a lease duration. Only safe when every leader-only writer has stopped by then;
   * the elector aborts their signal before it releases, but cannot wait for them.
   */
  releaseOnCancel?: boolean
  /** Called once on acquiring; the signal aborts the instant leadership ends for any reason. */
  onStartedLeading?: (signal: AbortSignal) => void
  /** Called once after leading ends (not when run ends without ever leading, unlike client-go). */
  onStoppedLeading?: () => void
  /** Called with each holder seen that differs from the last one reported, ourselves included. */
  onNewLeader?: (identity: string) => void
  /** [0, 1) for the acquire jitter; Math.random by default. A test seam. */
  random?: () => number
}

/** 'lost': leadership ended against our will (the process should exit non-zero); 'stopped': run's signal aborted. */
export type LeaderElectionResult = 'stopped' | 'lost'

/** RFC 1123 label, as Kubernetes checks namespace names. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const DNS_LABEL_MAX = 63

/** The timings with every absent one at its default. */
export function leaderElectionTimings(given: Partial<LeaderElectionTimings> = {}): LeaderElectionTimings {
  return {
    leaseDurationMs: given.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs,
    renewDeadlineMs: given.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs,
    retryPeriodMs: given.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs,
  }
}

/**
 * Every rule the settings break (empty when none), each naming the flag, the rule and the value:
 * leaseDuration > renewDeadline > retryPeriod × 1.2 > 0, as client-go requires. The first keeps the
 * leader's deadline ahead of any standby's takeover; the second leaves the leader at least one retry
 * before its deadline even when a try is late by the jitter.
 */
export function validateLeaderElection(settings: LeaderElectionTimings & Partial<LeaderLeaseRef>): string[] {
  const errors: string[] = []
  const {leaseDurationMs: lease, renewDeadlineMs: renew, retryPeriodMs: retry} = settings
  const f = LEADER_ELECTION_FLAGS
  const positive: [string, number][] = [[f.leaseDuration, lease], [f.renewDeadline, renew], [f.retryPeriod, retry]]
  for (const [flag, value] of positive) {
    if (!(Number.isFinite(value) && value > 0)) errors.push(`${flag} must be > 0 (got ${show(value)})`)
  }
  if (lease <= renew) {
    errors.push(`${f.leaseDuration} (${show(lease)}) must be greater than ${f.renewDeadline} (${show(renew)})`)
  }
  if (renew <= retry * LEADER_JITTER_FACTOR) {
    errors.push(
      `${f.renewDeadline} (${show(renew)}) must be greater than ${f.retryPeriod} (${show(retry)}) × ${LEADER_JITTER_FACTOR} ` +
        `(${show(retry * LEADER_JITTER_FACTOR)})`,
    )
  }
  if (settings.namespace !== undefined && !isDnsLabel(settings.namespace)) {
    errors.push(`${f.namespace} ${JSON.stringify(settings.namespace)} must be a valid namespace name (a DNS label: lowercase letters, digits and '-', at most ${DNS_LABEL_MAX} characters)`)
  }
  if (settings.name !== undefined && !isDnsSubdomain(settings.name)) {
    errors.push(`${f.id} ${JSON.stringify(settings.name)} must be a valid Lease name (a DNS subdomain: lowercase letters, digits, '-' and '.')`)
  }
  return errors
}

function isDnsLabel(name: string): boolean {
  return name.length <= DNS_LABEL_MAX && DNS_LABEL.test(name)
}

function show(ms: number): string {
  return Number.isFinite(ms) ? formatDuration(ms) : String(ms)
}
