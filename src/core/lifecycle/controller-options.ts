/**
 * The controller's settings: defaults in this one place and the rules that refuse a start, each
 * message naming the flag. Every error is returned at once so the user fixes them in one go.
 */
import {formatDuration} from '../durations.ts'
import {errorMessage} from '../errors.ts'
import {DEFAULT_GRACE_PERIOD_MS} from './lifecycle-options.ts'
import {LEADER_ELECTION_DEFAULTS, validateLeaderElection, type LeaderElectionTimings} from '../leader/leader-options.ts'
import {parseMaxUnhealthy, type MaxUnhealthy} from './mass-silence/max-unhealthy.ts'
import {DEFAULT_ZONE_LABELS} from './mass-silence/silence-groups.ts'
import {POOL_KIND_NAMES, POOL_KINDS, isPoolKindName, type PoolKind} from '../pool-kinds.ts'
import {parseRateFlags} from '../token-bucket.ts'
import {DEFAULT_REQUEST_LIMITS, requestLimits, type RequestLimits} from './request-limiter.ts'

export const CONTROLLER_DEFAULTS = {
  gracePeriodMs: DEFAULT_GRACE_PERIOD_MS,
  leaderElectionNamespace: 'ironpool-system',
  leaderElectionId: 'ironpool-controller',
  /** A dry run elects its own leader among its replicas: it must never take the lease of the controller in charge. */
  dryRunLeaderElectionId: 'ironpool-controller-dry-run',
  /** The dry run's write probe (write-probe.ts) renews this Lease, not the controller's. */
  dryRunWriteProbeLease: 'ironpool-dry-run-write-probe',
  /** `--qps`, `--burst`: the confirming reads and Unknown writes of all kinds together (request-limiter.ts). */
  qps: DEFAULT_REQUEST_LIMITS.qps,
  burst: DEFAULT_REQUEST_LIMITS.burst,
  ...LEADER_ELECTION_DEFAULTS,
} as const

export interface ControllerInput {
  gracePeriodMs: number
  /** Comma-separated kind names, or undefined for every kind the API serves. */
  kinds?: string
  maxUnhealthy?: string
  leaderElect: boolean
  leaderElectionNamespace: string
  /** Default: CONTROLLER_DEFAULTS.leaderElectionId, or its dryRunLeaderElectionId with dryRun. */
  leaderElectionId?: string
  leaderElection: LeaderElectionTimings
  dryRun?: boolean
  /** --zone-label, repeated: the labels whose value is a pool's zone. Default {@link DEFAULT_ZONE_LABELS}. */
  zoneLabels?: readonly string[]
  /** --qps as typed (a number, e.g. 100 or 2.5) and --burst. Default CONTROLLER_DEFAULTS' qps and burst. */
  qps?: string
  burst?: number
}

export interface ControllerOptions {
  gracePeriodMs: number
  /** Undefined: discover which kinds the API serves. */
  kinds?: PoolKind[]
  maxUnhealthy?: MaxUnhealthy
  leaderElection?: {namespace: string; id: string; timings: LeaderElectionTimings}
  dryRun: boolean
  zoneLabels: readonly string[]
  /** The bound on the controller's own requests (confirming reads, Unknown writes). */
  requestLimits: RequestLimits
}

/** A label key as Kubernetes accepts it: an optional DNS-subdomain prefix and '/', then a name of up to 63 characters. */
const LABEL_KEY = /^(?:(?=.{1,253}\/)[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/

export type ControllerValidation = {ok: true; options: ControllerOptions} | {ok: false; errors: string[]}

export function validateControllerOptions(input: ControllerInput): ControllerValidation {
  const errors: string[] = []
  if (!(input.gracePeriodMs > 0)) errors.push(`--grace-period must be > 0 (got ${formatDuration(input.gracePeriodMs)})`)

  let kinds: PoolKind[] | undefined
  if (input.kinds !== undefined) {
    const names = input.kinds.split(',').map((k) => k.trim()).filter(Boolean)
    const unknown = names.filter((n) => !isPoolKindName(n))
    if (names.length === 0) errors.push(`--kinds must name at least one kind of: ${POOL_KIND_NAMES.join(', ')}`)
    else if (unknown.length > 0) errors.push(`--kinds: ${unknown.map((n) => JSON.stringify(n)).join(', ')} not a pool kind; valid kinds: ${POOL_KIND_NAMES.join(', ')}`)
    else kinds = [...new Set(names)].map((n) => POOL_KINDS[n as keyof typeof POOL_KINDS])
  }

  let maxUnhealthy: MaxUnhealthy | undefined
  if (input.maxUnhealthy !== undefined && input.maxUnhealthy !== '') {
    try {
      maxUnhealthy = parseMaxUnhealthy(input.maxUnhealthy)
    } catch (error) {
      errors.push(errorMessage(error))
    }
  }

  const zoneLabels = input.zoneLabels === undefined || input.zoneLabels.length === 0 ? DEFAULT_ZONE_LABELS : input.zoneLabels
  for (const label of zoneLabels) {
    if (!LABEL_KEY.test(label)) errors.push(`--zone-label ${JSON.stringify(label)} is not a label key: [prefix/]name, the name at most 63 characters of letters, digits, '-', '_' and '.', beginning and ending with a letter or digit`)
  }
  const rate = parseRateFlags({qps: input.qps ?? String(CONTROLLER_DEFAULTS.qps), burst: input.burst ?? CONTROLLER_DEFAULTS.burst}, {qps: '--qps', burst: '--burst'})
  errors.push(...rate.errors)
  const dryRun = input.dryRun ?? false
  const leaderElectionId = input.leaderElectionId ?? (dryRun ? CONTROLLER_DEFAULTS.dryRunLeaderElectionId : CONTROLLER_DEFAULTS.leaderElectionId)
  if (input.leaderElect) {
    errors.push(...validateLeaderElection({...input.leaderElection, namespace: input.leaderElectionNamespace, name: leaderElectionId}))
    // A dry run that took the lease of the controller in charge would take its pen away.
    if (dryRun && leaderElectionId === CONTROLLER_DEFAULTS.leaderElectionId) {
      errors.push(`--leader-election-id must differ from the controller's (${CONTROLLER_DEFAULTS.leaderElectionId}) with --dry-run: a dry run elects its own leader (default ${CONTROLLER_DEFAULTS.dryRunLeaderElectionId})`)
    }
  }
  if (errors.length > 0) return {ok: false, errors}
  return {
    ok: true,
    options: {
      gracePeriodMs: input.gracePeriodMs,
      kinds,
      maxUnhealthy,
      leaderElection: input.leaderElect
        ? {namespace: input.leaderElectionNamespace, id: leaderElectionId, timings: input.leaderElection}
        : undefined,
      dryRun,
      zoneLabels,
      requestLimits: requestLimits(rate.qps, rate.burst),
    },
  }
}
