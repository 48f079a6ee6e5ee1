/**
 * The poollet's heartbeat (DESIGN.md, "Poollet: one heartbeat tick"): probe the runtime, renew the
 * Lease whatever the probe said, publish Ready. tickOnce() is the step, callable on its own (tests
 * drive it directly); run() repeats it with runEvery(). A tick never throws: every failure is logged
 * with the call that failed, returned in the TickResult, and retried by the next tick.
 */
import type {Clock} from '../clock.ts'
import type {DesiredCondition} from '../conditions.ts'
import {formatDuration} from '../durations.ts'
import {ProbeError, errorMessage, isAnswer} from '../errors.ts'
import {LeaseRenewer, type LeaseRenewal} from './lease-renewer.ts'
import {REASON_HEARTBEAT_RECEIVED, REASON_RUNTIME_UNREACHABLE, type PoolKind} from '../pool-kinds.ts'
import {POOLLET_DEFAULTS} from './poollet-options.ts'
import type {EventSink, LeaseStore, Logger, PoolStatusStore, RuntimeProbe} from '../ports.ts'
import {writeReady} from '../ready-writer.ts'
import {sleep} from '../clock.ts'
import {runEvery} from '../run-every.ts'
import {FULL_WRITE_PLAN, type ConditionStatus, type Pool, type StatusWritePlan} from '../types.ts'

export interface HeartbeatOptions {
  kind: PoolKind
  poolName: string
  /** See defaultHolderIdentity(): fixed for the life of the process. */
  holderIdentity: string
  probe: RuntimeProbe
  leases: LeaseStore
  pools: PoolStatusStore
  clock: Clock
  logger: Logger
  /** Where an Event of each Ready change goes. Default: none. */
  events?: EventSink
  /**
   * The pool from a watch cache, or undefined when the cache does not have it. With a cache, a tick that
   * changes nothing reads no pool; without one, each tick reads the pool once. (The heartbeat does not
   * keep the pool its last write returned: it would miss a Ready set by someone else, the controller's
   * Unknown above all.)
   */
  getPool?: () => Pool | undefined
  /**
   * What the serving API can hold of the pool's status. Without conditions (IronCore's BucketPool) the
   * heartbeat probes and renews the Lease, and writes no Ready. Default {@link FULL_WRITE_PLAN}.
   */
  plan?: StatusWritePlan
  /** Default 10s. */
  intervalMs?: number
  /** Written as leaseDurationSeconds, rounded up to whole seconds. Default 40s. */
  leaseDurationMs?: number
  /** The probe's deadline. Default 5s. */
  statusTimeoutMs?: number
  /**
   * Called after each tick whose Lease renewal failed: the edge drops its pooled connections so that
   * the next try dials afresh (the kubelet's onRepeatedHeartbeatFailure). Default: nothing.
   */
  onLeaseRenewalFailed?: (error: unknown) => void
  /** Test seams for run()'s jitter; see RunEveryOptions. */
  jitterFactor?: number
  random?: () => number
}

export interface ProbeResult {
  ok: boolean
  /** The text published as Ready's message when the probe failed. */
  error?: string
  durationMs: number
}

export interface LeaseResult {
  /** skipped: shutdown began before the Lease's turn. yielded: another live holder renews it (holder). */
  outcome: 'created' | 'renewed' | 'took-over' | 'error' | 'skipped' | 'yielded'
  durationMs: number
  previousHolder?: string
  /** Who holds the Lease this poollet yielded to. */
  holder?: string
  error?: unknown
  /** The call that failed, e.g. "update lease ironcore-machinepool-lease/p1". */
  action?: string
}

export interface ReadyResult {
  /**
   * skipped: shutdown began before Ready's turn. not-writable: the API has no conditions for the kind.
   * not-held: written, but the object the server returned does not carry it. yielded: another holder
   * has the Lease, and with it the pool's Ready: nothing written.
   */
  outcome: 'written' | 'unchanged' | 'not-found' | 'error' | 'skipped' | 'not-writable' | 'not-held' | 'yielded'
  /** The Ready status decided by this tick (absent when skipped). */
  status?: ConditionStatus
  error?: unknown
  action?: string
}

/** What one tick did, for the command to log and to turn into metrics. */
export interface TickResult {
  probe: ProbeResult
  lease: LeaseResult
  ready: ReadyResult
}

/**
 * After a renew() call's attempts at once have failed, the next call waits 200 ms, doubling to 7 s
 * (Kubernetes' lease controller: backoffEnsureLease), each wait drawn from its upper half so that
 * poollets failing together do not retry together; retries go on within the Lease duration, counted
 * from the start of the last renewal that succeeded, so one good second of API renews in time.
 */
export const RENEW_BACKOFF_BASE_MS = 200
export const RENEW_BACKOFF_MAX_MS = 7_000

/** The wait before the n-th (1-based) backoff retry of a renewal: [d/2, d), d = 200 ms · 2^(n-1) capped at 7 s. */
export function renewBackoffMs(n: number, random: () => number): number {
  const d = Math.min(RENEW_BACKOFF_BASE_MS * 2 ** Math.min(n - 1, 30), RENEW_BACKOFF_MAX_MS)
  return d / 2 + (random() * d) / 2
}

type Optional = 'getPool' | 'events' | 'jitterFactor' | 'random' | 'onLeaseRenewalFailed'
type Defaulted = Required<Omit<HeartbeatOptions, Optional>> & Pick<HeartbeatOptions, Optional>

/** The one place heartbeat defaults are applied. */
function withDefaults(options: HeartbeatOptions): Defaulted {
  return {
    ...options,
    intervalMs: options.intervalMs ?? POOLLET_DEFAULTS.heartbeatIntervalMs,
    leaseDurationMs: options.leaseDurationMs ?? POOLLET_DEFAULTS.heartbeatLeaseDurationMs,
    statusTimeoutMs: options.statusTimeoutMs ?? POOLLET_DEFAULTS.heartbeatStatusTimeoutMs,
    plan: options.plan ?? FULL_WRITE_PLAN,
  }
}

export class Heartbeat {
  private readonly options: Defaulted
  private readonly renewer: LeaseRenewer
  private yielded: string | undefined
  /** When (monotonic) the last renewal that succeeded started: the retry budget runs a Lease duration from it. */
  private renewedAt: number | undefined
  /** renew() calls failed since the last success: the backoff grows across ticks, so a long outage is not stormed. */
  private failedCalls = 0
  /** The last probe's outcome, for a kind whose API has no conditions: its changes are reported. */
  private probeOk: boolean | undefined

  constructor(options: HeartbeatOptions) {
    this.options = withDefaults(options)
    const {leases, clock, logger, poolName, kind, holderIdentity, leaseDurationMs} = this.options
    this.renewer = new LeaseRenewer({
      store: leases,
      clock,
      logger,
      name: poolName,
      namespace: kind.leaseNamespace,
      holderIdentity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
    })
  }

  /**
   * Ticks at once and then every interval (with jitter) until signal aborts; resolves when the last
   * tick ends. The cadence is fixed: a tick whose renewal retried for long keeps its phase, and the
   * next one is not pushed a full interval away.
   */
  run(signal: AbortSignal, onTick?: (result: TickResult) => void): Promise<void> {
    const {clock, intervalMs, jitterFactor, random, logger} = this.options
    return runEvery(
      async (stepSignal) => {
        const result = await this.tickOnce(stepSignal)
        onTick?.(result)
      },
      {
        clock,
        intervalMs,
        signal,
        // tickOnce() does not throw; only onTick could. Log it and keep beating.
        onError: (error) => logger.error({...this.fields(), err: error}, 'heartbeat tick failed'),
        jitterFactor,
        random,
        sliding: false,
      },
    )
  }

  /** One heartbeat. Once signal aborts, the call in flight finishes and the steps after it are skipped. */
  async tickOnce(signal: AbortSignal): Promise<TickResult> {
    const probe = await this.probe(signal)
    if (signal.aborted) return {probe, lease: {outcome: 'skipped', durationMs: 0}, ready: {outcome: 'skipped'}}
    const lease = await this.renewLease(signal)
    if (signal.aborted) return {probe, lease, ready: {outcome: 'skipped'}}
    if (lease.outcome === 'yielded') return {probe, lease, ready: {outcome: 'yielded', status: this.desiredReady(probe).status}}
    // The API did not answer the renewal (a stall, a cut link, a 5xx): a Ready write would wait a
    // request deadline for the same API and push the next tick off its slot, which then lands in
    // the next stall again (the simulator: a poollet phase-locked to stalls of 14.7 s every 20 s).
    // It goes out with the next tick. A refusal that was answered (403) does not stop it.
    if (lease.outcome === 'error' && !isAnswer(lease.error)) return {probe, lease, ready: {outcome: 'skipped'}}
    const ready = await this.publishReady(probe)
    return {probe, lease, ready}
  }

  /**
   * The probe, bounded by the status timeout. The probe gets a signal that aborts at the deadline, and
   * the tick also races the deadline, so a probe that ignores its signal still cannot hold up the Lease.
   */
  private async probe(signal: AbortSignal): Promise<ProbeResult> {
    const {clock, statusTimeoutMs, kind} = this.options
    const started = clock.monotonic()
    const deadline = new AbortController()
    const onAbort = () => deadline.abort(signal.reason)
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, {once: true})
    const cancelTimer = clock.setTimer(statusTimeoutMs, () =>
      deadline.abort(
        // Spelt as the channel's own deadline error (unary-channel.ts), whichever of the two fires first.
        new ProbeError(`${kind.probePath} DEADLINE_EXCEEDED: no answer within ${formatDuration(statusTimeoutMs)}`),
      ),
    )
    // Listening before the probe starts lets the deadline win over the probe's own abort error.
    const expired = new Promise<never>((_, reject) => {
      const fail = () => reject(deadline.signal.reason as Error)
      if (deadline.signal.aborted) fail()
      else deadline.signal.addEventListener('abort', fail, {once: true})
    })
    try {
      // Promise.race keeps a handler on the loser, so a probe that rejects after the deadline is no
      // unhandled rejection; the async wrapper turns a synchronous throw into a rejection.
      await Promise.race([expired, (async () => this.options.probe.probe(deadline.signal))()])
      return {ok: true, durationMs: clock.monotonic() - started}
    } catch (error) {
      return {ok: false, error: errorMessage(error) || 'runtime probe failed', durationMs: clock.monotonic() - started}
    } finally {
      cancelTimer()
      signal.removeEventListener('abort', onAbort)
    }
  }

  private async renewLease(signal: AbortSignal): Promise<LeaseResult> {
    const {clock, leaseDurationMs} = this.options
    const started = clock.monotonic()
    // Within the Lease duration from the last good renewal; once that has run out (a long outage),
    // within this tick's own interval, so that the next tick starts on time.
    const budgetEnd = Math.max((this.renewedAt ?? started) + leaseDurationMs, started + this.options.intervalMs)
    let renewal: LeaseRenewal
    for (;;) {
      const attemptStarted = clock.monotonic()
      // The first call of a run of failures tries at once up to 5 times, as the kubelet's does; the
      // calls after it, spaced by the backoff, try once each: with 5 a call, 1000 poollets against
      // an API refusing writes sent 5.8 times their steady rate (bench:poollet-recovery).
      renewal = await this.renewer.renew(signal, budgetEnd, this.failedCalls > 0 ? 1 : undefined)
      if (renewal.outcome !== 'error') {
        this.failedCalls = 0
        if (renewal.outcome !== 'yielded') this.renewedAt = attemptStarted
        break
      }
      const waitMs = renewBackoffMs(++this.failedCalls, this.options.random ?? Math.random)
      if (signal.aborted || clock.monotonic() + waitMs >= budgetEnd) break
      this.reportRenewalFailure(renewal, waitMs)
      try {
        await sleep(clock, waitMs, signal)
      } catch {
        break
      }
    }
    const durationMs = clock.monotonic() - started
    switch (renewal.outcome) {
      case 'created':
      case 'renewed':
        this.yielded = undefined
        return {outcome: renewal.outcome, durationMs}
      case 'took-over':
        if (this.yielded !== undefined) this.options.logger.info({...this.fields(), holder: this.yielded}, `pool ${this.options.poolName}: the Lease is this poollet's again, heartbeat resumed`)
        this.yielded = undefined
        return {outcome: 'took-over', durationMs, previousHolder: renewal.previousHolder}
      case 'yielded':
        this.yielded = renewal.holder
        if (renewal.first) await this.reportYield(renewal.holder, renewal.lease.spec.leaseDurationSeconds)
        return {outcome: 'yielded', durationMs, holder: renewal.holder}
      case 'error':
        this.reportRenewalFailure(renewal)
        return {outcome: 'error', durationMs, error: renewal.error, action: renewal.action}
    }
  }

  /**
   * A renew() call failed (its attempts at once all did): logged, and the edge drops its pooled
   * connections. retryInMs: the backoff before the next call, when there is one within the budget.
   */
  private reportRenewalFailure(renewal: Extract<LeaseRenewal, {outcome: 'error'}>, retryInMs?: number): void {
    this.logFailure(renewal.action, renewal.error, retryInMs === undefined ? {attempts: renewal.attempts} : {attempts: renewal.attempts, retryInMs: Math.round(retryInMs)})
    try {
      this.options.onLeaseRenewalFailed?.(renewal.error)
    } catch (error) {
      this.options.logger.error({...this.fields(), err: error}, 'onLeaseRenewalFailed failed')
    }
  }

  /**
   * Who holds the pool's Lease while this poollet yields it to another live holder; undefined while it
   * beats (or has not yet found out). The poollet's /readyz fails while this is set.
   */
  yieldedTo(): string | undefined {
    return this.yielded
  }

  /** Said once per yield: an error line naming the other holder, and a Warning Event on the pool. */
  private async reportYield(holder: string, holderDurationSeconds: number | undefined): Promise<void> {
    const {kind, poolName, holderIdentity} = this.options
    const lease = `${kind.leaseNamespace}/${poolName}`
    const duration = formatDuration((holderDurationSeconds ?? Math.ceil(this.options.leaseDurationMs / 1000)) * 1000)
    const message = `Lease ${lease} is renewed by another holder, ${holder}, since this poollet (${holderIdentity}) took it: this poollet stopped renewing it and writing Ready, and takes it again only once it is left unrenewed for ${duration}`
    this.options.logger.error({...this.fields(), lease, holder, holderIdentity}, message)
    await this.recordEvent('Warning', 'LeaseYielded', message)
  }

  /** An Event on the pool, its uid from the cache or, failing that, one read (an Event without one is still recorded). */
  private async recordEvent(type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const {events, kind, poolName, pools, getPool} = this.options
    if (events === undefined) return
    let uid = getPool?.()?.metadata.uid
    if (uid === undefined) uid = await pools.get(poolName).then((pool) => pool?.metadata.uid, () => undefined)
    events.record({apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, name: poolName, uid, type, reason, message})
  }

  private async publishReady(probe: ProbeResult): Promise<ReadyResult> {
    const {kind, poolName, pools, clock, getPool, plan} = this.options
    const decided = this.desiredReady(probe)
    if (!plan.conditions) {
      await this.reportProbeChange(probe)
      return {outcome: 'not-writable', status: decided.status}
    }
    // The store, recording which call is in flight, so a failure names it.
    let action = `get ${kind.name}pool ${poolName}`
    const store: PoolStatusStore = {
      get: (name) => {
        action = `get ${kind.name}pool ${name}`
        return pools.get(name)
      },
      writeConditions: (name, resourceVersion, conditions) => {
        action = `update ${kind.name}pool/status ${name}`
        return pools.writeConditions(name, resourceVersion, conditions)
      },
    }
    try {
      const result = await writeReady({
        store,
        clock,
        name: poolName,
        decide: (pool) => ({...decided, observedGeneration: pool.metadata.generation ?? 0}),
        current: getPool?.(),
        plan,
      })
      switch (result.outcome) {
        case 'written':
          // A change of meaning, rare by design: worth a line at info for the operator.
          this.options.logger.info(
            {...this.fields(), status: decided.status, reason: decided.reason, message: decided.message},
            `pool ${poolName} Ready=${decided.status} (${decided.reason})`,
          )
          this.options.events?.record({
            apiVersion: result.pool.apiVersion,
            kind: result.pool.kind,
            name: poolName,
            uid: result.pool.metadata.uid,
            type: decided.status === 'True' ? 'Normal' : 'Warning',
            reason: decided.status === 'True' ? `${kind.kind}Ready` : `${kind.kind}NotReady`,
            message: decided.message,
          })
          return {outcome: 'written', status: decided.status}
        case 'unchanged':
        case 'declined': // decide() above always decides; kept for the compiler's exhaustiveness.
          return {outcome: 'unchanged', status: decided.status}
        case 'not-found':
          this.options.logger.error(this.fields(), `pool ${poolName} not found`)
          return {outcome: 'not-found', status: decided.status}
        case 'not-writable': // handled above, before any read
          return {outcome: 'not-writable', status: decided.status}
        case 'not-held':
          // No Event and no "Ready=" line: nothing was stored. The next tick tries again.
          this.options.logger.warn(
            {...this.fields(), status: decided.status, reason: decided.reason},
            `pool ${poolName} Ready=${decided.status} was written, but the API did not keep it`,
          )
          return {outcome: 'not-held', status: decided.status}
      }
    } catch (error) {
      this.logFailure(action, error)
      return {outcome: 'error', status: decided.status, error, action}
    }
  }

  /**
   * Where the API has no conditions for the kind (IronCore's BucketPool) nothing else would show a
   * runtime going away: each change of the probe's outcome (and the first) is logged and recorded as an
   * Event on the pool (<Kind>ProbeFailed, <Kind>ProbeSucceeded), which `pool status` shows.
   */
  private async reportProbeChange(probe: ProbeResult): Promise<void> {
    if (this.probeOk === probe.ok) return
    const first = this.probeOk === undefined
    this.probeOk = probe.ok
    const {kind, poolName} = this.options
    const note = `this API has no conditions for ${kind.plural}`
    if (probe.ok) {
      const message = `${kind.readyMessage}${first ? '' : ' again'}`
      this.options.logger.info({...this.fields(), probe: 'ok'}, `pool ${poolName}: ${message} (${note}: recorded as an Event)`)
      await this.recordEvent('Normal', `${kind.kind}ProbeSucceeded`, message)
    } else {
      const message = probe.error ?? 'runtime probe failed'
      this.options.logger.warn({...this.fields(), probe: 'failed', error: message}, `pool ${poolName}: runtime probe failed: ${message} (${note}: recorded as an Event)`)
      await this.recordEvent('Warning', `${kind.kind}ProbeFailed`, message)
    }
  }

  private desiredReady(probe: ProbeResult): Omit<DesiredCondition, 'type' | 'observedGeneration'> {
    return probe.ok
      ? {status: 'True', reason: REASON_HEARTBEAT_RECEIVED, message: this.options.kind.readyMessage}
      : {status: 'False', reason: REASON_RUNTIME_UNREACHABLE, message: probe.error ?? 'runtime probe failed'}
  }

  private logFailure(action: string, error: unknown, extra: object = {}): void {
    this.options.logger.error({...this.fields(), action, err: error, ...extra}, `${action} failed: ${errorMessage(error)}`)
  }

  private fields(): {kind: string; pool: string} {
    return {kind: this.options.kind.name, pool: this.options.poolName}
  }
}
