/**
 * Leader election on a coordination.k8s.io Lease with client-go's semantics
 * (k8s.io/client-go/tools/leaderelection): try to acquire every retry period with jitter; as leader,
 * renew every retry period and give up when no renewal succeeded within the renew deadline. A Lease
 * held by another is taken only when its record has not changed for the lease duration its holder
 * wrote, on OUR monotonic clock: the times written in the Lease come from other machines' clocks and
 * are compared only for change, never with ours, so neither clock skew nor a step of our own wall
 * clock can make a live leader look dead.
 */
import {sleep} from '../clock.ts'
import {AlreadyExistsError, ConflictError, NotFoundError, errorMessage} from '../errors.ts'
import {
  LEADER_JITTER_FACTOR,
  leaderElectionTimings,
  validateLeaderElection,
  type LeaderElectionResult,
  type LeaderElectionTimings,
  type LeaderElectorOptions,
} from './leader-options.ts'
import {runEvery} from '../run-every.ts'
import {createdLease, recordKey, releasedLease, renewedLease, takenOverLease, type LeaderRecordContext} from './leader-record.ts'
import type {Lease} from '../types.ts'

type Attempt = 'leading' | {heldBy: string}

export class LeaderElector {
  private readonly options: LeaderElectorOptions
  private readonly timings: LeaderElectionTimings
  /** The Lease's record as last seen (spec fields only) and when, on our clock, it last changed. */
  private observedKey = ''
  private observedTime = 0
  /** Our last successful write; the leader renews from it without a read (client-go's fast path). */
  private latest: Lease | undefined
  /** When the last successful acquire or renew attempt started. */
  private renewedAt = 0
  private reported: string | undefined
  private leading: AbortController | undefined
  private running = false

  /** Throws when the timings break client-go's rules; the message names the flags. */
  constructor(options: LeaderElectorOptions) {
    this.timings = leaderElectionTimings(options)
    const errors = validateLeaderElection({...this.timings, name: options.name, namespace: options.namespace})
    if (errors.length > 0) throw new Error(`invalid leader election settings: ${errors.join('; ')}`)
    this.options = options
  }

  get isLeader(): boolean {
    return this.leading !== undefined && !this.leading.signal.aborted
  }

  /** The holder of the Lease as last seen, if any. */
  get leader(): string | undefined {
    return this.reported
  }

  /** Acquires, then leads until leadership is lost or signal aborts. Never rejects on store errors. */
  async run(signal: AbortSignal): Promise<LeaderElectionResult> {
    if (this.running) throw new Error('LeaderElector.run is already running')
    this.running = true
    try {
      if (!(await this.acquire(signal))) return 'stopped'
      return await this.lead(signal)
    } finally {
      this.running = false
    }
  }

  private async acquire(signal: AbortSignal): Promise<boolean> {
    const acquired = new AbortController()
    const until = AbortSignal.any([signal, acquired.signal])
    this.options.logger.info({lease: this.describe()}, `attempting to acquire leader lease ${this.describe()}`)
    await runEvery(
      async () => {
        const attempt = await this.attempt(signal)
        if (attempt === 'leading') acquired.abort()
      },
      {
        clock: this.options.clock,
        intervalMs: this.timings.retryPeriodMs,
        signal: until,
        jitterFactor: LEADER_JITTER_FACTOR,
        onError: (error) => this.logFailure('acquire', error),
        random: this.options.random,
      },
    )
    // An acquire already sent when the signal aborted may have landed: lead() then releases if asked.
    return acquired.signal.aborted
  }

  private async lead(signal: AbortSignal): Promise<LeaderElectionResult> {
    const {clock, logger} = this.options
    const leading = new AbortController()
    this.leading = leading
    let result: LeaderElectionResult = 'stopped'
    const lose = (why: string) => {
      if (leading.signal.aborted) return
      result = 'lost'
      leading.abort(new Error(`leadership lost: ${why}`))
      logger.warn({lease: this.describe(), identity: this.options.identity}, `lost leader lease ${this.describe()}: ${why}`)
    }
    // Stopping aborts the leader-only signal synchronously, before anything here awaits.
    const stop = () => leading.abort(signal.reason)
    signal.addEventListener('abort', stop, {once: true})
    if (signal.aborted) stop()
    let cancelDeadline = () => {}
    const armDeadline = () => {
      cancelDeadline()
      // From the start of the last successful attempt, not its end: the write may have landed (and a
      // standby started counting) anywhere in between. A little stricter than client-go.
      const ms = this.renewedAt + this.timings.renewDeadlineMs - clock.monotonic()
      cancelDeadline = clock.setTimer(ms, () => lose(`no successful renewal within ${this.timings.renewDeadlineMs} ms`))
    }
    const started = !leading.signal.aborted
    try {
      if (started) {
        logger.info({lease: this.describe(), identity: this.options.identity}, `acquired leader lease ${this.describe()}`)
        armDeadline()
        this.callback('onStartedLeading', () => this.options.onStartedLeading?.(leading.signal))
      }
      while (!leading.signal.aborted) {
        await sleep(clock, this.timings.retryPeriodMs, leading.signal).catch(() => {})
        if (leading.signal.aborted) break
        // Raced with the signal: a renewal hanging past the deadline must not delay the loss.
        const attempt = await untilAborted(this.attempt(leading.signal), leading.signal).catch((error: unknown) => {
          if (!leading.signal.aborted) this.logFailure('renew', error)
          return undefined
        })
        if (attempt === 'leading') armDeadline()
        // Someone else holds it now: we are certainly not leading, so do not wait for the deadline.
        else if (attempt !== undefined) lose(`lease is held by ${attempt.heldBy}`)
      }
    } finally {
      cancelDeadline()
      signal.removeEventListener('abort', stop)
    }
    if (started) this.callback('onStoppedLeading', () => this.options.onStoppedLeading?.())
    if (result === 'stopped' && this.options.releaseOnCancel) await this.release()
    return result
  }

  /** One try to acquire or renew (client-go's tryAcquireOrRenew). Writes only while `allowed` is not aborted. */
  private async attempt(allowed: AbortSignal): Promise<Attempt> {
    const {store, clock, identity, name} = this.options
    const started = clock.monotonic()
    const ours = this.latest
    if (ours !== undefined && ours.spec.holderIdentity === identity) {
      try {
        return this.wrote(await store.update(guarded(allowed, renewedLease(ours, this.context()))), started)
      } catch (error) {
        // Someone wrote or deleted the Lease: read it and decide again.
        if (!(error instanceof ConflictError || error instanceof NotFoundError)) throw error
        this.latest = undefined
      }
    }
    const current = await store.get(name)
    if (current === undefined) return this.wrote(await store.create(guarded(allowed, createdLease(name, this.options.namespace, this.context()))), started)
    this.observe(current)
    const holder = current.spec.holderIdentity
    if (holder && holder !== identity && clock.monotonic() < this.observedTime + this.holderLeaseMs(current)) {
      return {heldBy: holder}
    }
    const next = holder === identity ? renewedLease(current, this.context()) : takenOverLease(current, this.context())
    return this.wrote(await store.update(guarded(allowed, next)), started)
  }

  /**
   * How long the holder's claim lasts: the duration the holder wrote, as client-go reads it, not our
   * own flag (replicas with different flags would otherwise both lead). Ours only when none is written.
   */
  private holderLeaseMs(lease: Lease): number {
    const seconds = lease.spec.leaseDurationSeconds
    return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : this.timings.leaseDurationMs
  }

  private wrote(lease: Lease, started: number): Attempt {
    this.latest = lease
    this.observe(lease, true)
    this.renewedAt = started
    return 'leading'
  }

  /** Notes the record and, when it changed (or we wrote it), the time on our clock. */
  private observe(lease: Lease, ownWrite = false): void {
    const key = recordKey(lease.spec)
    const holderIdentity = lease.spec.holderIdentity
    if (ownWrite || key !== this.observedKey) {
      this.observedKey = key
      this.observedTime = this.options.clock.monotonic()
    }
    if (holderIdentity && holderIdentity !== this.reported) {
      this.reported = holderIdentity
      this.callback('onNewLeader', () => this.options.onNewLeader?.(holderIdentity))
    }
  }

  /** client-go's ReleaseOnCancel: no holder, so a standby takes it on its next try. Never throws. */
  private async release(): Promise<void> {
    const {store, logger, name, identity} = this.options
    try {
      const base = this.latest ?? (await store.get(name))
      if (base?.spec.holderIdentity !== identity) return
      try {
        this.latest = await store.update(releasedLease(base, this.options.clock.wall()))
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error
        // Our own renewal in flight at the stop may have landed first: read once and try again.
        const current = await store.get(name)
        if (current?.spec.holderIdentity !== identity) return
        this.latest = await store.update(releasedLease(current, this.options.clock.wall()))
      }
      logger.info({lease: this.describe(), identity}, `released leader lease ${this.describe()}`)
    } catch (error) {
      logger.warn({lease: this.describe(), err: errorMessage(error)}, `could not release leader lease ${this.describe()}: ${errorMessage(error)}`)
    }
  }

  private context(): LeaderRecordContext {
    return {identity: this.options.identity, leaseDurationMs: this.timings.leaseDurationMs, now: this.options.clock.wall()}
  }

  private describe(): string {
    return `${this.options.namespace}/${this.options.name}`
  }

  private logFailure(what: 'acquire' | 'renew', error: unknown): void {
    const message = errorMessage(error)
    // Losing a race to another candidate is the election working, not a fault worth a warning.
    const raced = error instanceof ConflictError || error instanceof AlreadyExistsError
    const level = raced ? 'debug' : 'warn'
    this.options.logger[level]({lease: this.describe(), err: message}, `failed to ${what} leader lease ${this.describe()}: ${message}`)
  }

  /** A throwing callback is the caller's bug; it must not break the election loop. */
  private callback(name: string, fn: () => void): void {
    try {
      fn()
    } catch (error) {
      this.options.logger.error({callback: name, err: errorMessage(error)}, `leader election callback ${name} threw: ${errorMessage(error)}`)
    }
  }
}

/** The value, unless writing is no longer allowed: no write leaves after leadership or the run ended. */
function guarded<T>(allowed: AbortSignal, value: T): T {
  allowed.throwIfAborted()
  return value
}

/** The promise's outcome, or a rejection with the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error)
    if (signal.aborted) {
      onAbort()
      return
    }
    signal.addEventListener('abort', onAbort, {once: true})
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
