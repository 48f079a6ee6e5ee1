/**
 * The options of the controller's lifecycle engine for one pool kind, their defaults (applied in
 * {@link lifecycleDefaults} and nowhere else), and the observer through which it reports to metrics.
 */
import type {Clock} from '../clock.ts'
import type {BreakerTransition, MaxUnhealthy} from './mass-silence/max-unhealthy.ts'
import type {PoolKind} from '../pool-kinds.ts'
import type {EventSink, Logger, PoolStatusStore} from '../ports.ts'
import {FULL_WRITE_PLAN, type Lease, type Pool, type StatusWritePlan} from '../types.ts'
import {RequestLimiter} from './request-limiter.ts'
import type {ZoneTransition} from './mass-silence/zone-breakers.ts'

/** IEP-15's and Kubernetes' node-monitor grace period since v1.32. */
export const DEFAULT_GRACE_PERIOD_MS = 50_000
/**
 * A failed confirming read or Unknown write of one pool is retried after 1 s, doubling up to 10 s (at
 * the default 50 s grace; a shorter grace scales both down, to grace/50 and grace/5): soon enough that
 * a dead pool is marked within a few seconds of its deadline on a lossy link (k failures in a row, of
 * probability f^k, cost 2^k - 1 base delays), and no risk of hammering a broken API: every retry goes
 * through the request limiter. The retry lasts as long as the pool stays stale; progress or deletion
 * ends it.
 */
export const DEFAULT_RETRY_BASE_MS = 1_000
export const DEFAULT_RETRY_MAX_MS = 10_000

/** The retry delays for a grace period: the defaults at 50 s, scaled down for a shorter one. */
export function retryTimings(gracePeriodMs: number): {retryBaseMs: number; retryMaxMs: number} {
  return {retryBaseMs: Math.min(DEFAULT_RETRY_BASE_MS, gracePeriodMs / 50), retryMaxMs: Math.min(DEFAULT_RETRY_MAX_MS, gracePeriodMs / 5)}
}
/**
 * How long the read that confirms a pool's silence may take. Slower is blindness, not a verdict: an
 * API server that takes seconds to answer one GET is not one whose watch can be trusted.
 */
export const DEFAULT_CONFIRM_TIMEOUT_MS = 5_000

export type ConfirmOutcome = 'silent' | 'renewed' | 'failed'

/** One pool marked Unknown. delayMs is how late the write landed after the pool's deadline. */
export interface MarkReport {
  name: string
  deadline: number
  writtenAt: number
  delayMs: number
  /** Failed attempts before this one. */
  retries: number
}

export interface BreakerReport {
  transition: BreakerTransition
  /** Pools stale at once, and all pools of the kind, when the breaker changed state. */
  unhealthy: number
  total: number
  limit: MaxUnhealthy
}

/** Hooks for metrics; production wiring maps each to a counter, histogram or gauge. */
export interface LifecycleObserver {
  marked?(report: MarkReport): void
  breaker?(report: BreakerReport): void
  /** A Ready=Unknown write failed (it is retried while the pool stays silent); a failed confirming read is not one. */
  writeFailed?(name: string, error: unknown): void
  /**
   * A confirming read before a mark answered: 'silent' (the Lease shows the renewal last seen, or is
   * gone: the mark goes ahead), 'renewed' (a renewal the watch had not delivered: not marked), or
   * 'failed' (no answer in time: blindness, not a verdict).
   */
  confirmRead?(name: string, outcome: ConfirmOutcome): void
  /** A stale pool the engine could not mark (the API has no conditions for the kind, or did not keep the write). */
  unmarkable?(report: UnmarkableReport): void
  /** A pool fell silent: newly past its deadline (at: the deadline, evidence clock), not Unknown already. */
  fellSilent?(name: string, at: number): void
  /** A zone's breaker held the zone ('tripped') or released it ('recovered'). */
  zoneBreaker?(change: ZoneTransition): void
  /** Dry run (--dry-run): a pool the engine would have marked Unknown; nothing was written. */
  wouldMark?(report: MarkReport): void
}

/** Why a stale pool stays unmarked: the API cannot hold a Ready ('no-conditions') or dropped it ('not-held'). */
export interface UnmarkableReport {
  name: string
  reason: 'no-conditions' | 'not-held'
}

export interface PoolLifecycleOptions {
  kind: PoolKind
  clock: Clock
  /** Where the Unknown write goes (resourceVersion precondition, re-read on conflict). */
  store: PoolStatusStore
  /** The pool as the watch cache holds it now; decisions use this, not an event's payload. */
  getPool: (name: string) => Pool | undefined
  /** The pool's Lease as the watch cache holds it, read on a pool's first sight. Default: none. */
  getLease?: (name: string) => Lease | undefined
  /**
   * A fresh read of the pool's Lease from the API (undefined: no Lease), made before each mark. It is
   * given a signal that aborts at confirmTimeoutMs; the engine stops waiting then in any case.
   */
  confirmLease: (name: string, signal: AbortSignal) => Promise<Lease | undefined>
  /** Default {@link DEFAULT_CONFIRM_TIMEOUT_MS}. */
  confirmTimeoutMs?: number
  /**
   * Every Lease of the kind's namespace, fresh (a consistent LIST, quorum read): confirms many due
   * pools at once when more wait than it has pages (confirm-batcher.ts), bounded by twice confirmTimeoutMs or 100 ms a page. Default: none
   * (one confirmLease per pool). `names`: the Leases the batch asks about; one may keep only those
   * (at 100,000 pools the rest is 100,000 Leases held for nothing) and must keep all of those it lists.
   */
  listLeases?: (signal: AbortSignal, names: ReadonlySet<string>) => Promise<readonly Lease[]>
  /**
   * Each confirming read and write that was answered (ok) or failed or was too slow (with what
   * failed): one answer among many for the sight, which turns blind when many fail together. Default: nothing.
   */
  onRequest?: (ok: boolean, detail?: string) => void
  /** Bounds the reads and writes (rate, burst, in flight); share one per process. Default: one of its own with the default limits. */
  limiter?: RequestLimiter
  /**
   * With --max-unhealthy: the window in which pools going silent count as "at once" (marked ones
   * included). Default {@link breakerWindowMs}.
   */
  breakerWindowMs?: number
  /** With --max-unhealthy: how long a newly silent pool is held before it is judged. Default {@link breakerHoldMs}. */
  breakerHoldMs?: number
  /**
   * Asked before each decision: whether the controller's sight still vouches for its view (its own
   * loop ran on time, the API answers promptly). May report blindness (setViewWhole(false)) before it
   * returns false. Default: always.
   */
  canJudge?: () => boolean
  events: EventSink
  logger: Logger
  /** What the serving API can hold of the kind's status. Default FULL_WRITE_PLAN (ironpool's CRDs). */
  plan?: StatusWritePlan
  /** Default {@link DEFAULT_GRACE_PERIOD_MS}. */
  gracePeriodMs?: number
  /** Default: off. */
  maxUnhealthy?: MaxUnhealthy
  /**
   * With maxUnhealthy: the pool's zone (its zone label), for the per-zone breaker (zone-breakers.ts);
   * undefined for a pool without one. Default: none (the fleet-wide breaker alone).
   */
  zoneOf?: (name: string) => string | undefined
  /** Default: no hooks. */
  observer?: LifecycleObserver
  /** Defaults {@link retryTimings} of the grace period. */
  retryBaseMs?: number
  retryMaxMs?: number
  /**
   * How long an unmarkable pool (the API kept no mark: no conditions, or a webhook dropped it) waits
   * before it is tried again, reported only the first time. Default {@link unmarkableRetryMs} of the grace period.
   */
  unmarkableRetryMs?: number
  /**
   * Dry run: judge exactly as otherwise, and where the Unknown write would be sent, record a would-mark
   * (log, a WouldMarkUnknown Event with the verdict record, observer.wouldMark) and treat the
   * pool as marked until it progresses; nothing is written to a pool. Default false.
   */
  dryRun?: boolean
  /** Who judges, as the verdict record names it (the leader-election identity, or the host). Default {@link DEFAULT_CONTROLLER_IDENTITY}. */
  identity?: string
}

export const DEFAULT_CONTROLLER_IDENTITY = 'ironpool-controller'

export type ResolvedLifecycleOptions = Required<Omit<PoolLifecycleOptions, 'maxUnhealthy' | 'listLeases' | 'zoneOf'>> &
  Pick<PoolLifecycleOptions, 'maxUnhealthy' | 'listLeases' | 'zoneOf'>

export function lifecycleDefaults(options: PoolLifecycleOptions): ResolvedLifecycleOptions {
  return {
    ...options,
    getLease: options.getLease ?? (() => undefined),
    confirmTimeoutMs: options.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS,
    onRequest: options.onRequest ?? (() => {}),
    limiter: options.limiter ?? new RequestLimiter(options.clock),
    breakerWindowMs: options.breakerWindowMs ?? breakerWindowMs(options.gracePeriodMs ?? DEFAULT_GRACE_PERIOD_MS),
    breakerHoldMs: options.breakerHoldMs ?? breakerHoldMs(options.gracePeriodMs ?? DEFAULT_GRACE_PERIOD_MS),
    canJudge: options.canJudge ?? (() => true),
    plan: options.plan ?? FULL_WRITE_PLAN,
    gracePeriodMs: options.gracePeriodMs ?? DEFAULT_GRACE_PERIOD_MS,
    observer: options.observer ?? {},
    retryBaseMs: options.retryBaseMs ?? retryTimings(options.gracePeriodMs ?? DEFAULT_GRACE_PERIOD_MS).retryBaseMs,
    retryMaxMs: options.retryMaxMs ?? retryTimings(options.gracePeriodMs ?? DEFAULT_GRACE_PERIOD_MS).retryMaxMs,
    unmarkableRetryMs: options.unmarkableRetryMs ?? unmarkableRetryMs(options.gracePeriodMs ?? DEFAULT_GRACE_PERIOD_MS),
    dryRun: options.dryRun ?? false,
    identity: options.identity ?? DEFAULT_CONTROLLER_IDENTITY,
  }
}

/**
 * The long backoff of an unmarkable pool: ten grace periods (500 s at the defaults). Each try costs a
 * confirming read and a write that cannot hold, per dead pool of such a kind, so it is rare; it exists
 * so that a cause that goes away (a webhook removed, a CRD upgraded) does not leave a dead pool Ready.
 */
export function unmarkableRetryMs(gracePeriodMs: number): number {
  return gracePeriodMs * 10
}

/**
 * The breaker's hold: a fifth of the grace period, IronCore's heartbeat interval at its defaults (10 s
 * renewals, 50 s grace), over which a partition's deadlines spread: by the time the first pool of a
 * partitioned fleet is judged, the rest have fallen due too.
 */
export function breakerHoldMs(gracePeriodMs: number): number {
  return gracePeriodMs / 5
}

/**
 * The breaker's window: four fifths of the grace period, IronCore's lease duration at its defaults
 * (40 s): poollets that renew more slowly than the hold spread their deadlines further, and the
 * pools marked early in the spread still count against the limit.
 */
export function breakerWindowMs(gracePeriodMs: number): number {
  return (gracePeriodMs * 4) / 5
}

/** The delay before retry number n (1-based): base, 2·base, 4·base … capped at max. */
export function retryDelay(options: Pick<ResolvedLifecycleOptions, 'retryBaseMs' | 'retryMaxMs'>, n: number): number {
  return Math.min(options.retryBaseMs * 2 ** Math.min(n - 1, 30), options.retryMaxMs)
}
