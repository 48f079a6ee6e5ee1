/**
 * The controller's engine for one pool kind: it tracks each pool's signs of life and, when a pool has
 * shown none for the grace period, writes Ready=Unknown once. Inputs are level-based (the current
 * pool or Lease, or a name); a decision reads the tracker and the watch cache, never an old event
 * payload, and the next look is asked for by time through one deadline queue.
 *
 * It writes only while it is the leader and its view of pools and Leases is whole. Both start false,
 * so a wiring mistake fails safe (nothing marked). Either becoming true restarts every pool's grace
 * period: silence seen while blind, or while another instance was in charge, is no evidence.
 */
import type {DesiredCondition} from './conditions.ts'
import {DeadlineQueue} from './deadline-queue.ts'
import {errorMessage} from './errors.ts'
import {HealthTracker, readyOf, type HealthRecord} from './health-tracker.ts'
import {lifecycleDefaults, retryDelay, type PoolLifecycleOptions, type ResolvedLifecycleOptions} from './lifecycle-options.ts'
import {logBreaker, logMark, markReport, unknownEvent, unknownReady} from './lifecycle-reports.ts'
import {UnhealthyBreaker} from './max-unhealthy.ts'
import {writeReady, type ReadyWriteResult} from './ready-writer.ts'
import type {Lease, Pool} from './types.ts'

/** A pool past its deadline with no progress since. */
interface Overdue {
  deadline: number
  retries: number
  writing: boolean
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

  constructor(options: PoolLifecycleOptions) {
    this.options = lifecycleDefaults(options)
    this.tracker = new HealthTracker(options.clock)
    this.deadlines = new DeadlineQueue(options.clock, (names) => this.due(names))
    this.breaker = new UnhealthyBreaker(options.maxUnhealthy)
  }

  poolUpserted(pool: Pool): void {
    const name = pool.metadata.name
    const seen = this.tracker.observePool(name, readyOf(pool), () => this.options.getLease(name)?.spec.renewTime)
    if (seen === 'new') {
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

  get breakerState(): BreakerState {
    return {tripped: this.breaker.tripped, unhealthy: this.breaker.unhealthy, total: this.breaker.total}
  }

  private get active(): boolean {
    return this.leader && this.whole && !this.closed
  }

  /** On every change of leader or whole: drop all deadlines; if now active, start every grace period afresh. */
  private restart(): void {
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
    if (!this.active) return
    const now = this.options.clock.monotonic()
    const ready: string[] = []
    for (const name of names) {
      const record = this.tracker.get(name)
      if (record === undefined) continue
      const deadline = record.lastChange + this.options.gracePeriodMs
      if (this.overdue.has(name)) ready.push(name)
      else if (now < deadline) this.deadlines.set(name, deadline)
      else {
        this.overdue.set(name, {deadline, retries: 0, writing: false})
        ready.push(name)
      }
    }
    this.judge()
    this.mark(ready)
  }

  /** Updates the breaker; on recovery, marks the pools it held back. */
  private judge(): void {
    if (!this.active) return
    const transition = this.breaker.update(this.overdue.size, this.tracker.size)
    const limit = this.breaker.limit
    if (transition === undefined || limit === undefined) return
    const report = {transition, unhealthy: this.breaker.unhealthy, total: this.breaker.total, limit}
    logBreaker(this.options.logger, this.options.kind, report)
    this.options.observer.breaker?.(report)
    if (transition === 'recovered') this.mark([...this.overdue.keys()])
  }

  private mark(names: Iterable<string>): void {
    if (!this.active || this.breaker.tripped) return
    for (const name of names) {
      const overdue = this.overdue.get(name)
      // A pending deadline on an overdue pool is a retry's backoff: wait for it.
      if (overdue === undefined || overdue.writing || this.deadlines.has(name)) continue
      if (this.tracker.get(name)?.readyStatus === 'Unknown') continue
      overdue.writing = true
      const write = this.write(name, overdue).finally(() => this.writes.delete(write))
      this.writes.add(write)
    }
  }

  private async write(name: string, overdue: Overdue): Promise<void> {
    const {store, clock, getPool} = this.options
    let result: ReadyWriteResult
    try {
      result = await writeReady({store, clock, name, current: getPool(name), decide: (pool) => this.decide(name, pool)})
    } catch (error) {
      overdue.writing = false
      this.failed(name, overdue, error)
      return
    }
    overdue.writing = false
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
    if (!this.active || this.breaker.tripped || !this.tracker.has(name)) return undefined
    this.poolUpserted(pool)
    const record = this.tracker.get(name)
    if (record === undefined || !this.overdue.has(name)) return undefined
    if (this.options.clock.monotonic() - record.lastChange < this.options.gracePeriodMs) return undefined
    if (readyOf(pool).status === 'Unknown') return undefined
    return unknownReady(this.options.kind, pool)
  }

  private failed(name: string, overdue: Overdue, error: unknown): void {
    overdue.retries++
    const delay = retryDelay(this.options, overdue.retries)
    const fields = {kind: this.options.kind.name, pool: name, err: errorMessage(error), retries: overdue.retries, retryInMs: delay}
    this.options.logger.error(fields, 'writing Ready=Unknown failed')
    this.options.observer.writeFailed?.(name, error)
    if (this.active && this.overdue.get(name) === overdue) this.deadlines.set(name, this.options.clock.monotonic() + delay)
  }
}
