/**
 * The controller's engine for one pool kind: it tracks each pool's signs of life and, when a pool has
 * shown none for the grace period, writes Ready=Unknown once. Inputs are level-based (the current
 * pool or Lease, or a name); a decision reads the tracker and the watch cache, never an old event
 * payload, and the next look is asked for by time through one deadline queue. Every elapsed time is
 * read on the monotonic clock.
 *
 * It writes only while it is the leader and its view of pools and Leases is whole. Both start false,
 * so a wiring mistake fails safe (nothing marked). Either becoming true restarts every pool's grace
 * period: silence seen while blind, or while another instance was in charge, is no evidence. Before
 * each decision it also asks canJudge() (the controller's sight: its loop ran on time, the API
 * answers), so a deadline that fires the instant a paused process resumes judges nothing.
 *
 * A pool past its deadline is marked only after a fresh, bounded read of its Lease confirms that it
 * still shows the renewal last seen. That read goes out after the deadline fired, so its answer comes
 * back after any watch event already waiting in the sockets has been read; a changed Lease is
 * progress; a read that fails or is slow is blindness, not a verdict.
 */
import type {DesiredCondition} from '../conditions.ts'
import {bounded} from '../bounded.ts'
import {DeadlineQueue} from './deadline-queue.ts'
import {errorMessage} from '../errors.ts'
import {HealthTracker, readyOf, type HealthRecord} from './health-tracker.ts'
import {lifecycleDefaults, retryDelay, type PoolLifecycleOptions, type ResolvedLifecycleOptions} from './lifecycle-options.ts'
import {logBreaker, logMark, logUnmarkable, markReport, unknownEvent, unknownReady, unmarkableEvent} from './lifecycle-reports.ts'
import {UnhealthyBreaker} from './max-unhealthy.ts'
import {writeReady, type ReadyWriteResult} from '../ready-writer.ts'
import type {Lease, Pool} from '../types.ts'

/** A pool past its deadline with no progress since. */
interface Overdue {
  deadline: number
  retries: number
  /** Its confirming read or its write is in flight. */
  busy: boolean
  /** The API cannot hold a mark for it (reported once): nothing more is tried until it progresses. */
  unmarkable?: boolean
}

export interface BreakerState {
  tripped: boolean
  unhealthy: number
  total: number
}

export class PoolLifecycle {
  private readonly options: ResolvedLifecycleOptions
  private readonly tracker: HealthTracker
  /** Per pool, when to look next: its grace deadline, or the retry of a failed write. */
  private readonly deadlines: DeadlineQueue
  private readonly breaker: UnhealthyBreaker
  /** The breaker counts these; those whose Ready is not Unknown are the ones to mark. */
  private readonly overdue = new Map<string, Overdue>()
  private readonly writes = new Set<Promise<void>>()
  private leader = false
  private whole = false
  private closed = false
  /**
   * Aborted at every change of leader, whole or closed: the reads and writes in flight belong to the
   * period that ended (e.g. leadership lost: no write of ours may land while another leader writes).
   */
  private era = new AbortController()

  constructor(options: PoolLifecycleOptions) {
    this.options = lifecycleDefaults(options)
    this.tracker = new HealthTracker(options.clock)
    this.deadlines = new DeadlineQueue(options.clock, (names) => this.due(names))
    this.breaker = new UnhealthyBreaker(options.maxUnhealthy)
  }

  poolUpserted(pool: Pool): void {
    const name = pool.metadata.name
    const seen = this.tracker.observePool(name, readyOf(pool), () => this.options.getLease(name)?.spec.renewTime, pool.metadata.uid)
    if (seen === 'new') {
      // A new pool, or a new one under an old name: whatever the old one owed is forgotten.
      this.overdue.delete(name)
      this.deadlines.delete(name)
      this.arm(name)
      this.judge()
    } else if (seen === 'progress') this.progressed(name)
    // Someone moved a silent pool's Ready away from Unknown without a sign of life: mark it again.
    else if (this.overdue.has(name)) this.mark([name])
  }

  poolDeleted(name: string): void {
    this.tracker.forget(name)
    this.deadlines.delete(name)
    this.overdue.delete(name)
    this.judge()
  }

  leaseUpserted(lease: Lease): void {
    if (lease.namespace !== this.options.kind.leaseNamespace) return
    if (this.tracker.observeLease(lease.name, lease.spec.renewTime) === 'progress') this.progressed(lease.name)
  }

  /** A deleted Lease is silence: the pool's grace period runs on. */
  leaseDeleted(_name: string): void {}

  /** Whether the watches on pools and Leases are synced and unbroken. */
  setViewWhole(whole: boolean): void {
    if (whole === this.whole) return
    this.whole = whole
    this.restart()
  }

  setLeader(leader: boolean): void {
    if (leader === this.leader) return
    this.leader = leader
    this.restart()
  }

  /** Stops all timers and writes for good; resolves when the write in flight has finished. */
  async close(): Promise<void> {
    this.closed = true
    this.restart()
    await this.drain()
  }

  /** Resolves when no write is in flight. */
  async drain(): Promise<void> {
    while (this.writes.size > 0) await Promise.allSettled([...this.writes])
  }

  get trackedPools(): number {
    return this.tracker.size
  }

  record(name: string): HealthRecord | undefined {
    return this.tracker.get(name)
  }

  /** When the engine looks at the pool next (grace deadline or write retry), if it will. */
  nextLook(name: string): number | undefined {
    return this.deadlines.get(name)
  }

  /**
   * Pools past their deadline that are not marked Unknown (held by the breaker, a confirm or write
   * pending or retrying, or unmarkable), and how far past its deadline the oldest is. O(overdue).
   */
  overdueStats(): {pools: number; oldestMs: number} {
    const now = this.options.clock.monotonic()
    let pools = 0
    let oldestMs = 0
    for (const [name, overdue] of this.overdue) {
      if (this.tracker.get(name)?.readyStatus === 'Unknown') continue
      pools++
      oldestMs = Math.max(oldestMs, now - overdue.deadline)
    }
    return {pools, oldestMs}
  }

  get breakerState(): BreakerState {
    return {tripped: this.breaker.tripped, unhealthy: this.breaker.unhealthy, total: this.breaker.total}
  }

  private get active(): boolean {
    return this.leader && this.whole && !this.closed
  }

  /**
   * Active, and the sight still vouches for the view. canJudge() may itself report blindness, which
   * turns the view not whole (and clears every deadline) before it returns: hence active twice.
   */
  private judgeable(): boolean {
    return this.active && this.options.canJudge() && this.active
  }

  /** On every change of leader or whole: drop all deadlines; if now active, start every grace period afresh. */
  private restart(): void {
    this.era.abort(new Error(this.closed ? 'the lifecycle engine stopped' : !this.leader ? 'leadership lost' : 'the view is not whole'))
    this.era = new AbortController()
    this.deadlines.clear()
    this.overdue.clear()
    if (!this.active) return
    this.tracker.restartAll()
    for (const name of this.tracker.names()) this.arm(name)
    this.judge()
  }

  private arm(name: string): void {
    const record = this.tracker.get(name)
    if (this.active && record !== undefined) this.deadlines.set(name, record.lastChange + this.options.gracePeriodMs)
  }

  private progressed(name: string): void {
    this.arm(name)
    if (this.overdue.delete(name)) this.judge()
  }

  /** Deadlines passed (or retries due): the whole batch is counted before any of it is marked. */
  private due(names: string[]): void {
    const now = this.options.clock.monotonic()
    if (!this.judgeable()) {
      // Not judged now. If the view went blind, restart() re-arms every pool when it is whole again;
      // if the sight said no without that, look again shortly, or these pools would never be looked at.
      if (this.active) for (const name of names) this.deadlines.set(name, now + this.options.retryBaseMs)
      return
    }
    const ready: string[] = []
    for (const name of names) {
      const record = this.tracker.get(name)
      if (record === undefined) continue
      const deadline = record.lastChange + this.options.gracePeriodMs
      if (this.overdue.has(name)) ready.push(name)
      else if (now < deadline) this.deadlines.set(name, deadline)
      else {
        this.overdue.set(name, {deadline, retries: 0, busy: false})
        ready.push(name)
      }
    }
    this.judge()
    this.mark(ready)
  }

  /** Updates the breaker; on recovery, marks the pools it held back. */
  private judge(): void {
    // Counting walks the overdue pools: without a breaker (the default) there is nothing to count for.
    if (!this.active || this.breaker.limit === undefined) return
    const transition = this.breaker.update(this.newlyStale(), this.tracker.size)
    const limit = this.breaker.limit
    if (transition === undefined || limit === undefined) return
    const report = {transition, unhealthy: this.breaker.unhealthy, total: this.breaker.total, limit}
    logBreaker(this.options.logger, this.options.kind, report)
    this.options.observer.breaker?.(report)
    if (transition === 'recovered') this.mark([...this.overdue.keys()])
  }

  /**
   * The overdue pools that a mark would change: those already Unknown (long dead, or marked by a
   * previous leader) are not news, and counting them would keep the breaker tripped for good.
   */
  private newlyStale(): number {
    let n = 0
    for (const name of this.overdue.keys()) if (this.tracker.get(name)?.readyStatus !== 'Unknown') n++
    return n
  }

  private mark(names: Iterable<string>): void {
    if (this.breaker.tripped || !this.judgeable()) return
    for (const name of names) {
      const overdue = this.overdue.get(name)
      // A pending deadline on an overdue pool is a retry's backoff: wait for it.
      if (overdue === undefined || overdue.busy || overdue.unmarkable || this.deadlines.has(name)) continue
      if (this.tracker.get(name)?.readyStatus === 'Unknown') continue
      overdue.busy = true
      const write = this.confirmAndWrite(name, overdue).finally(() => this.writes.delete(write))
      this.writes.add(write)
    }
  }

  /** Whether this overdue entry is still the pool's and the engine may still act on it. */
  private stillOverdue(name: string, overdue: Overdue): boolean {
    return this.overdue.get(name) === overdue && this.judgeable()
  }

  private async confirmAndWrite(name: string, overdue: Overdue): Promise<void> {
    const era = this.era.signal
    let lease: Lease | undefined
    try {
      lease = await this.confirm(name, era)
    } catch (error) {
      overdue.busy = false
      // Aborted because leadership or the view changed: no failure, nothing to tell the sight.
      if (era.aborted) return
      this.options.observer.confirmRead?.(name, 'failed')
      this.options.onConfirmFailed(name, error)
      this.failed(name, overdue, error, 'reading its Lease to confirm the silence failed', false)
      return
    }
    if (!this.stillOverdue(name, overdue)) {
      overdue.busy = false
      return
    }
    const renewTime = lease?.spec.renewTime
    if (renewTime !== undefined && renewTime !== this.tracker.get(name)?.renewTime) {
      // The Lease moved and the watch has not told us (yet): a sign of life, and a hint that the watch lags.
      overdue.busy = false
      this.options.observer.confirmRead?.(name, 'renewed')
      this.options.logger.info({kind: this.options.kind.name, pool: name}, 'pool not marked: a fresh read of its Lease shows a renewal the watch had not delivered')
      if (this.tracker.observeLease(name, renewTime) === 'progress') this.progressed(name)
      return
    }
    this.options.observer.confirmRead?.(name, 'silent')
    await this.write(name, overdue, era)
  }

  /** The pool's Lease as the API has it now, bounded by confirmTimeoutMs on the engine's own clock. */
  private confirm(name: string, era: AbortSignal): Promise<Lease | undefined> {
    const {clock, confirmTimeoutMs, kind} = this.options
    return bounded((signal) => this.options.confirmLease(name, signal), {
      clock,
      timeoutMs: confirmTimeoutMs,
      signal: era,
      timeoutError: () => new Error(`get lease ${kind.leaseNamespace}/${name}: no answer within ${confirmTimeoutMs} ms`),
    })
  }

  private async write(name: string, overdue: Overdue, era: AbortSignal): Promise<void> {
    const {store, clock, getPool} = this.options
    let result: ReadyWriteResult
    try {
      result = await writeReady({store, clock, name, current: getPool(name), decide: (pool) => this.decide(name, pool), signal: era, plan: this.options.plan})
    } catch (error) {
      overdue.busy = false
      if (era.aborted) return
      this.failed(name, overdue, error, 'writing Ready=Unknown failed', true)
      return
    }
    overdue.busy = false
    if (result.outcome === 'not-writable' || result.outcome === 'not-held') {
      // Staleness reported, never claimed as a mark: nothing was stored.
      overdue.unmarkable = true
      const report = {name, reason: result.outcome === 'not-writable' ? 'no-conditions' : 'not-held'} as const
      logUnmarkable(this.options.logger, this.options.kind, report)
      this.options.events.record(unmarkableEvent(this.options.kind, result.pool, report.reason))
      this.options.observer.unmarkable?.(report)
      return
    }
    if (result.outcome !== 'written') return
    // Absorbed only while still overdue: after progress or a restart, the record holds newer news.
    if (this.overdue.get(name) === overdue) this.tracker.recordOwnWrite(name, readyOf(result.pool))
    const report = markReport(name, overdue.deadline, clock.monotonic(), overdue.retries)
    logMark(this.options.logger, this.options.kind, report)
    this.options.events.record(unknownEvent(this.options.kind, result.pool))
    this.options.observer.marked?.(report)
  }

  /**
   * Called by writeReady with the cached pool, and again with each re-read after a conflict. A re-read
   * pool is an observation like any other: if it shows progress, the pool is no longer overdue.
   */
  private decide(name: string, pool: Pool): Omit<DesiredCondition, 'type'> | undefined {
    if (this.breaker.tripped || !this.tracker.has(name) || !this.judgeable()) return undefined
    this.poolUpserted(pool)
    const record = this.tracker.get(name)
    if (record === undefined || !this.overdue.has(name)) return undefined
    if (this.options.clock.monotonic() - record.lastChange < this.options.gracePeriodMs) return undefined
    if (readyOf(pool).status === 'Unknown') return undefined
    return unknownReady(this.options.kind, pool)
  }

  private failed(name: string, overdue: Overdue, error: unknown, what: string, wasWrite: boolean): void {
    overdue.retries++
    const delay = retryDelay(this.options, overdue.retries)
    const fields = {kind: this.options.kind.name, pool: name, err: errorMessage(error), retries: overdue.retries, retryInMs: delay}
    this.options.logger.error(fields, what)
    if (wasWrite) this.options.observer.writeFailed?.(name, error)
    if (this.active && this.overdue.get(name) === overdue) this.deadlines.set(name, this.options.clock.monotonic() + delay)
  }
}
