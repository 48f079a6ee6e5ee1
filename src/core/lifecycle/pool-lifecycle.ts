/**
 * The controller's engine for one pool kind: it tracks each pool's signs of life and, when a pool has
 * shown none for the grace period, writes Ready=Unknown once. Inputs are level-based (the current
 * pool or Lease, or a name); a decision reads the tracker and the watch cache, never an old event
 * payload, and the next look is asked for by time through one deadline queue. Every elapsed time is
 * read on the monotonic clock.
 *
 * It writes only while it is the leader and its view of pools and Leases is whole. Both start false,
 * so a wiring mistake fails safe (nothing marked). Before each decision it also asks canJudge() (the
 * controller's sight: its loop ran on time, the API answers), so a deadline that fires the instant a
 * paused process resumes judges nothing.
 *
 * Blindness suspends evidence; it does not erase it. Silence is measured on an {@link EvidenceClock}
 * that stands still while the view is not whole: every deadline moves by the time spent blind, and
 * the silence seen before a spell still counts after it. Grace periods start afresh only where events
 * may really have been missed: a spell in which this process was paused or a cache relisted, first
 * sight of a pool. A new leader keeps what this process saw as a standby: its predecessor's silence
 * is no evidence of ours, but our own is.
 *
 * One pool's trouble is that pool's: a failed confirming read or write retries that pool with a
 * doubling backoff, and is reported to the sight as one answer among many (the sight turns blind on
 * evidence about the API as a whole). Reads and writes go through a {@link RequestLimiter}, so a mass
 * death is a steady queue, not a burst. A write already sent is never abandoned when the view turns
 * blind: it finishes, and a write whose outcome is unknown (no answer, or aborted when leadership was
 * lost) is settled by reading the pool back; every mark that lands is logged, Evented and counted once.
 *
 * A pool past its deadline is marked only after a fresh, bounded read of its Lease confirms that it
 * still shows the renewal last seen. That read goes out after the deadline fired, so its answer comes
 * back after any watch event already waiting in the sockets has been read; a changed Lease is
 * progress; a read that fails or is slow is no verdict.
 */
import type {DesiredCondition} from '../conditions.ts'
import {bounded} from '../bounded.ts'
import {ConfirmBatcher, LIST_PAGE, SharedFailure} from './confirm-batcher.ts'
import {DeadlineQueue} from './deadline-queue.ts'
import {errorMessage, isAnswer} from '../errors.ts'
import {EvidenceClock} from './sight/evidence-clock.ts'
import {HealthTracker, readyOf, type HealthRecord} from './health-tracker.ts'
import {lifecycleDefaults, retryDelay, type PoolLifecycleOptions, type ResolvedLifecycleOptions} from './lifecycle-options.ts'
import {logBreaker, logZoneBreaker, logMark, logUnmarkable, logWouldMark, markReport, unknownEvent, unknownReady, unmarkableEvent, withVerdict, wouldMarkEvent, writeRetryingEvent} from './lifecycle-reports.ts'
import {UnhealthyBreaker} from './mass-silence/max-unhealthy.ts'
import {writeReady, type ReadyWriteResult} from '../ready-writer.ts'
import type {ViewChange} from './sight/view-state.ts'
import type {BlindReason} from './sight/sight.ts'
import type {Lease, Pool, PoolCondition} from '../types.ts'
import type {HoldReason, OverdueState, VerdictRecord} from './verdict.ts'
import {BlindLedger, buildVerdict, VerdictNotebook} from './verdict-record.ts'
import {ZoneBreakers} from './mass-silence/zone-breakers.ts'

/**
 * Where the handling of an overdue pool stands: exactly one step at a time, each with its next one.
 * - due: a look is armed in the deadline queue (at once, or shortly when the sight said no), or the
 *   pool is marked (Ready=Unknown, which the tracker shows) and waits for progress;
 * - held: in the breaker's hold window (--max-unhealthy): a look is armed at its end;
 * - retrying: its confirming read or write failed: a look is armed after the backoff;
 * - unmarkable: the API cannot hold a mark for it (reported once a spell): a look is armed after a
 *   long backoff (a webhook that dropped the mark may be gone by then);
 * - confirming, writing (queued in the limiter), sent (the write is out), settling (a write of unknown
 *   outcome is read back): a request is out, bounded by its deadline; its end sets the next step.
 * What holds the whole engine (blind, not the leader, a breaker tripped) holds every step on top: the
 * queue fires nothing while blind, and a breaker's recovery restarts what it held.
 * PoolLifecycle.strandedPools() checks that every overdue, unmarked pool has its next step.
 */
type Step = 'due' | 'held' | 'retrying' | 'unmarkable' | 'confirming' | 'writing' | 'sent' | 'settling'

const IN_FLIGHT: ReadonlySet<Step> = new Set(['confirming', 'writing', 'sent', 'settling'])

/** How many times a write of unknown outcome whose era ended is read back before it is left to the watch. */
const SETTLE_LATER_TRIES = 8

/** A pool past its deadline with no progress since. */
interface Overdue {
  /** When it fell due, on the evidence clock. */
  deadline: number
  retries: number
  step: Step
  /*
   * What this spell's requests left behind, which no step decides: each is read by the handler of an
   * answer or a watch event, not by what happens next.
   */
  /** A write of ours whose outcome is not known yet: the next sight of the pool settles it. */
  unsettled?: boolean
  /** The current attempt's mark was reported (logged, Evented, counted): never a second time. */
  reported?: boolean
  /**
   * The lastTransitionTime of each Unknown this spell sent: a mark of unknown outcome is ours only if
   * the pool carries one of them. Another replica's mark has its own (a replica paused while its write
   * hung took a new leader's mark for its own, and both reported it: the simulator's seed 63928).
   */
  sentStamps?: string[]
  /**
   * The pool as the watch showed it carrying this write's mark while the write waited for its answer.
   * The answer decides; if the answer is lost, this sighting is that it landed, which a settling read
   * may no longer show (the poollet wrote True over it) or may fail to get (the simulator's seed
   * 120492 of the loss class: the mark landed, was seen, and was never reported).
   */
  sighted?: Pool
  /**
   * A failure of this pool's requests has been told to the sight: its next ones are not. One pool's
   * trouble (a webhook that fails its writes, a request that hangs) counts once toward the request
   * rule, so a few bad pools retrying cannot make up the share that blinds the controller.
   */
  failureTold?: boolean
}

export interface BreakerState {
  tripped: boolean
  unhealthy: number
  total: number
}

export class PoolLifecycle {
  private readonly options: ResolvedLifecycleOptions
  /** The monotonic clock with blind spells cut out: silence and deadlines are measured on it. */
  private readonly evidence: EvidenceClock
  private readonly tracker: HealthTracker
  /** Per pool, when to look next (evidence clock): its grace deadline, a retry, or the end of a breaker hold. */
  private readonly deadlines: DeadlineQueue
  private readonly breaker: UnhealthyBreaker
  /** The confirming reads: each pool's own GET, or one LIST for many when many wait. */
  private readonly confirmations: ConfirmBatcher
  /** With --max-unhealthy and zoned pools: each zone's own breaker, beside the fleet-wide one. */
  private readonly zones: ZoneBreakers
  /** The breaker counts these; those whose Ready is not Unknown are the ones to mark. */
  private readonly overdue = new Map<string, Overdue>()
  /**
   * Pools that went silent (fell due, not Unknown then) within the breaker's window, marked ones
   * included, with when they fell due; oldest first, as they fall due in deadline order.
   */
  private readonly silent = new Map<string, number>()
  /** Each overdue spell's attempt in flight (confirm, write, settle), so strandedPools() can tell a step in flight from a lost one. */
  private readonly attempts = new Map<Overdue, Promise<void>>()
  /**
   * Writes of ours of unknown outcome whose pool stopped being overdue without a sign of life (a
   * spell seen late moved its deadline back into the future): if the watch shows the mark, it landed,
   * and it is reported then.
   */
  private readonly unsettledMarks = new Map<string, Overdue>()
  /** The read-backs settleLater() has armed, cancelled by close(). */
  private readonly settleTimers = new Set<() => void>()
  /** The unsettled writes with a read-back armed (one at a time each). */
  private readonly settlingLater = new WeakSet<Overdue>()
  /** The verdict record's facts: blind spells cut out, and per overdue spell what happened to it. */
  private readonly ledger = new BlindLedger()
  private readonly notes = new VerdictNotebook()
  /**
   * Dry run: pools another controller marked Unknown after this engine saw them otherwise. The dry run
   * judges as if it alone were in charge, so such a mark neither stops its would-mark nor counts as
   * its own; one seen at first sight (long dead, or marked before) is respected as the real engine does.
   */
  private readonly foreignMarks = new Set<string>()
  /** When the breaker last tripped (wall ms), for the records of the pools it holds. */
  private breakerSinceWall = 0
  /** When each zone held now tripped (wall ms), for the records of the pools it holds. */
  private readonly zoneSinceWall = new Map<string, number>()
  private leader = false
  /** The evidence clock's reading when every grace period last started afresh (or at creation). */
  private evidenceSince: number
  private whole = false
  private closed = false
  /**
   * Aborted at every change of leadership and at close: the reads and writes in flight belong to the
   * period that ended (leadership lost: no write of ours may land while another leader writes). A
   * change of the view aborts nothing.
   */
  private era = new AbortController()

  constructor(options: PoolLifecycleOptions) {
    this.options = lifecycleDefaults(options)
    this.evidence = new EvidenceClock(options.clock)
    this.evidenceSince = this.evidence.monotonic()
    this.tracker = new HealthTracker(this.evidence, () => this.evidence.cutOutMs)
    this.deadlines = new DeadlineQueue(this.evidence, (names) => this.due(names))
    this.deadlines.suspend()
    this.breaker = new UnhealthyBreaker(options.maxUnhealthy)
    const {clock, confirmTimeoutMs, kind} = this.options
    this.confirmations = new ConfirmBatcher({
      clock,
      limiter: () => this.options.limiter,
      get: (name, signal) => this.options.confirmLease(name, signal),
      list: () => this.options.listLeases,
      // One Lease per pool: the pools tracked say how long a LIST of their namespace is.
      listPages: () => this.tracker.size / LIST_PAGE,
      timeoutMs: confirmTimeoutMs,
      timeoutError: (what) => new Error(`get lease ${kind.leaseNamespace}/${what}: no answer within ${confirmTimeoutMs} ms`),
    })
    // The zones' sizes are recounted at most once per breaker hold (or when the pool count changes).
    this.zones = new ZoneBreakers(options.maxUnhealthy, options.zoneOf ?? (() => undefined), this.options.breakerHoldMs)
  }

  poolUpserted(pool: Pool): void {
    const name = pool.metadata.name
    const before = this.tracker.get(name)?.readyStatus
    const seen = this.tracker.observePool(name, readyOf(pool), () => this.options.getLease(name)?.spec.renewTime, pool.metadata.uid)
    if (seen === 'new') {
      // A new pool, or a new one under an old name: whatever the old one owed is forgotten.
      this.overdue.delete(name)
      this.silent.delete(name)
      this.unsettledMarks.delete(name)
      this.foreignMarks.delete(name)
      this.deadlines.delete(name)
      this.arm(name)
      this.judge()
      return
    }
    if (this.options.dryRun && before !== 'Unknown' && readyOf(pool).status === 'Unknown') this.foreignMarks.add(name)
    if (seen === 'progress') {
      this.progressed(name)
      return
    }
    const overdue = this.overdue.get(name) ?? this.unsettledMarks.get(name)
    if (overdue === undefined) return
    // The watch shows what a write of ours of unknown outcome did (answered by no answer, its
    // settling read still out or failed): it landed. landed() reports it once, whichever of the watch
    // and the settling read comes first. A write still waiting for its answer is told by the answer:
    // the watch cannot tell our mark from another's (a lagging watch delivered the previous leader's
    // mark while a new leader's write was out, and both reported it: the simulator's seed 41536).
    if (overdue.unsettled === true && this.isOurWrite(pool, overdue)) this.landed(name, overdue, pool)
    else if (overdue.step === 'sent' && this.isOurMark(pool)) {
      if (this.isOurWrite(pool, overdue)) overdue.sighted = pool
    }
    // Someone moved a silent pool's Ready away from Unknown without a sign of life: mark it again.
    else this.mark([name])
  }

  poolDeleted(name: string): void {
    this.tracker.forget(name)
    this.deadlines.delete(name)
    this.overdue.delete(name)
    this.silent.delete(name)
    this.unsettledMarks.delete(name)
    this.foreignMarks.delete(name)
    this.judge()
  }

  leaseUpserted(lease: Lease): void {
    if (lease.namespace !== this.options.kind.leaseNamespace) return
    if (this.tracker.observeLease(lease.name, lease.spec.renewTime) === 'progress') this.progressed(lease.name)
  }

  /** A deleted Lease is silence: the pool's grace period runs on. */
  leaseDeleted(_name: string): void {}

  /**
   * Whether the view (the sight, the watches on pools and Leases) is whole. Turning blind stops the
   * evidence clock, as of how.sinceMs ago; turning whole runs it on, and when events may have been
   * missed meanwhile (how.lost) every grace period starts afresh.
   */
  setViewWhole(whole: boolean, how: ViewChange = {sinceMs: 0, lost: false}, reason?: BlindReason): void {
    if (whole === this.whole) return
    this.whole = whole
    if (!whole) {
      this.evidence.stop(how.sinceMs)
      this.ledger.stopped(this.evidence.monotonic(), reason)
      this.deadlines.suspend()
      return
    }
    this.evidence.resume()
    this.ledger.resumed(this.evidence.cutOutMs)
    if (how.lost) this.restartEvidence()
    else this.reviewOverdue()
    this.deadlines.resume()
    this.judge()
  }

  setLeader(leader: boolean): void {
    if (leader === this.leader) return
    this.leader = leader
    this.newEra()
  }

  /** Stops all timers and writes for good; resolves when the writes in flight (and their settling reads) have finished. */
  async close(): Promise<void> {
    this.closed = true
    for (const cancel of this.settleTimers) cancel()
    this.settleTimers.clear()
    this.newEra()
    await this.drain()
  }

  /** Resolves when no write is in flight. */
  async drain(): Promise<void> {
    while (this.attempts.size > 0) await Promise.allSettled([...this.attempts.values()])
  }

  get trackedPools(): number {
    return this.tracker.size
  }

  /** What the engine remembers of the pool; lastChange is on the evidence clock (blind time cut out). */
  record(name: string): HealthRecord | undefined {
    return this.tracker.get(name)
  }

  /** When the engine looks at the pool next (grace deadline, retry or hold), on the monotonic clock as of now, if it will. */
  nextLook(name: string): number | undefined {
    const at = this.deadlines.get(name)
    return at === undefined ? undefined : this.evidence.toReal(at)
  }

  /**
   * Pools past their deadline that are not marked Unknown (held by blindness, the breaker, a confirm
   * or write pending or retrying, or unmarkable), and how far past its deadline the oldest is, blind
   * time not counted. O(overdue).
   */
  overdueStats(): {pools: number; oldestMs: number} {
    const now = this.evidence.monotonic()
    let pools = 0
    let oldestMs = 0
    for (const [name, overdue] of this.overdue) {
      if (this.alreadyUnknown(name, overdue)) continue
      pools++
      oldestMs = Math.max(oldestMs, now - overdue.deadline)
    }
    return {pools, oldestMs}
  }

  /**
   * How much evidence this engine holds: time with a whole view (blind time cut out) since every
   * grace period last started afresh (at creation, or after a spell that may have lost events). A
   * replica campaigns for leadership once this has reached a grace period.
   */
  evidenceAgeMs(): number {
    return this.evidence.monotonic() - this.evidenceSince
  }

  /**
   * Pools that are overdue (silent past their grace period, blind time cut out) and not marked, with
   * no next step: no look armed, not held by a breaker, and no request in flight (a step in flight
   * whose attempt has ended counts as stranded too). Empty unless the engine has a defect; the
   * simulator (sim/) asks after every step. O(pools).
   */
  strandedPools(): string[] {
    if (!this.active || this.breaker.tripped) return []
    const now = this.evidence.monotonic()
    const stranded: string[] = []
    for (const name of this.tracker.names()) {
      const record = this.tracker.get(name)
      if (record === undefined || record.lastChange + this.options.gracePeriodMs > now) continue
      const overdue = this.overdue.get(name)
      // Marked (or, in a dry run, would-marked), looked at later, held by a zone's breaker, or in flight.
      if (this.alreadyUnknown(name, overdue) || this.deadlines.has(name) || this.heldByBreaker(name)) continue
      if (overdue !== undefined && IN_FLIGHT.has(overdue.step) && this.attempts.has(overdue)) continue
      stranded.push(name)
    }
    return stranded
  }

  /**
   * Why the pool is marked, or what holds it: the record of its current overdue spell (undefined when
   * it is not overdue, or this engine is not the one judging: a standby forgets what it held).
   */
  verdict(name: string): VerdictRecord | undefined {
    const overdue = this.overdue.get(name)
    return overdue === undefined ? undefined : this.recordOf(name, overdue)
  }

  get breakerState(): BreakerState {
    return {tripped: this.breaker.tripped, unhealthy: this.breaker.unhealthy, total: this.breaker.total}
  }

  private get active(): boolean {
    return this.leader && !this.closed
  }

  /**
   * Active, whole, and the sight still vouches for the view. canJudge() may itself report blindness,
   * which turns the view not whole before it returns: hence whole twice.
   */
  private judgeable(): boolean {
    return this.active && this.whole && this.options.canJudge() && this.whole
  }

  /**
   * Leadership gained, lost, or the engine closed: what was in flight belongs to the period that
   * ended. A new leader keeps the evidence this process gathered as a standby (its own watches and
   * sight, blind time cut out, grace restarted wherever events may have been missed): the silence it
   * saw is its own, not its predecessor's. A pool it saw first a moment ago has only that moment of
   * silence counted. Restarting every grace period instead made each leader change cost a grace
   * period, and repeated stalls of the API (each costing leadership) held dead pools for as long as
   * they went on (the simulator: seed 1120).
   */
  private newEra(): void {
    this.era.abort(new Error(this.closed ? 'the lifecycle engine stopped' : 'leadership lost'))
    this.era = new AbortController()
    this.deadlines.clear()
    this.forgetOverdue()
    if (!this.active) return
    for (const name of this.tracker.names()) this.arm(name)
    this.judge()
  }

  /** What was overdue is forgotten, except that a write of ours of unknown outcome is still reported if the watch shows it landed. */
  private forgetOverdue(): void {
    // Read back alone: nothing of the new era looks at them (their pools may be Unknown already).
    for (const [name, overdue] of this.overdue) if (overdue.unsettled === true) this.settleLater(name, overdue)
    this.overdue.clear()
    this.silent.clear()
  }

  /** Every pool's grace period starts now (on the evidence clock); what was overdue is forgotten. */
  private restartEvidence(): void {
    this.evidenceSince = this.evidence.monotonic()
    this.deadlines.clear()
    this.forgetOverdue()
    this.tracker.restartAll()
    for (const name of this.tracker.names()) this.arm(name)
  }

  /**
   * Whole again, the silence kept. After a spell seen late, the evidence clock stepped back to its
   * start: a pool that fell due in between is not overdue any more. A pool still overdue that was
   * waiting out a retry's backoff (its reads failed with the API) is looked at now: the backoff grew
   * with the outage, not with the pool's trouble; it starts again at its base. A breaker hold runs on.
   * O(overdue).
   */
  private reviewOverdue(): void {
    const now = this.evidence.monotonic()
    for (const [name, overdue] of this.overdue) {
      const record = this.tracker.get(name)
      if (IN_FLIGHT.has(overdue.step) || record === undefined) continue
      if (record.lastChange + this.options.gracePeriodMs > now) {
        this.overdue.delete(name)
        this.silent.delete(name)
        if (overdue.unsettled) this.unsettledMarks.set(name, overdue)
        this.arm(name)
      } else if ((overdue.step === 'due' || overdue.step === 'retrying') && (this.deadlines.get(name) ?? now) > now) {
        overdue.retries = 0
        overdue.step = 'due'
        this.deadlines.set(name, now)
      } else if (!this.deadlines.has(name) && !this.alreadyUnknown(name, overdue)) {
        // Overdue, unmarked, nothing in flight and no look armed: looked at now, so no pool is stranded.
        this.deadlines.set(name, now)
      }
    }
  }

  private arm(name: string): void {
    const record = this.tracker.get(name)
    if (this.active && record !== undefined) this.deadlines.set(name, record.lastChange + this.options.gracePeriodMs)
  }

  private progressed(name: string): void {
    // A write of ours of unknown outcome may still have landed, unseen yet: the watch or a read settles
    // it. It may be the pool's overdue state, or one parked already (reviewOverdue() put the pool back
    // in its grace period after a spell seen late): a renewal must not forget that one either.
    const overdue = this.overdue.get(name)
    const parked = this.unsettledMarks.get(name)
    const unsettled = overdue?.unsettled === true ? overdue : parked?.unsettled === true ? parked : undefined
    if (unsettled !== undefined) {
      if (IN_FLIGHT.has(unsettled.step)) this.unsettledMarks.set(name, unsettled)
      else this.settleLater(name, unsettled)
    } else this.unsettledMarks.delete(name)
    this.foreignMarks.delete(name)
    this.arm(name)
    this.silent.delete(name)
    if (this.overdue.delete(name)) this.judge()
  }

  /** Deadlines passed (or retries or holds due): the whole batch is counted before any of it is marked. */
  private due(names: string[]): void {
    const now = this.evidence.monotonic()
    if (!this.judgeable()) {
      // Not judged now. Blind: looked at when whole again (the queue fires nothing before). Else the
      // sight said no without that: look again shortly, or these pools would never be looked at.
      if (this.active) for (const name of names) this.deadlines.set(name, this.whole ? now + this.options.retryBaseMs : now)
      return
    }
    const hold = this.breaker.limit !== undefined
    const ready: string[] = []
    for (const name of names) {
      const record = this.tracker.get(name)
      if (record === undefined) continue
      const overdue = this.overdue.get(name)
      if (overdue !== undefined) {
        // Its look came (a hold's end, a backoff's, a long one's): judged again.
        if (!IN_FLIGHT.has(overdue.step)) overdue.step = 'due'
        ready.push(name)
        continue
      }
      const deadline = record.lastChange + this.options.gracePeriodMs
      if (now < deadline) {
        this.deadlines.set(name, deadline)
        continue
      }
      const entry: Overdue = {deadline, retries: 0, step: 'due'}
      this.overdue.set(name, entry)
      const news = !this.alreadyUnknown(name, entry)
      if (news) {
        this.silent.set(name, deadline)
        this.options.observer.fellSilent?.(name, deadline)
      }
      // With the breaker on, a newly silent pool is judged once the window has seen who else went silent.
      if (hold && news) {
        entry.step = 'held'
        this.deadlines.set(name, now + this.options.breakerHoldMs)
      } else ready.push(name)
    }
    this.judge()
    this.mark(ready)
  }

  /** Updates the breaker; on recovery, marks the pools it held back. */
  private judge(): void {
    // Counting walks the overdue pools: without a breaker (the default) there is nothing to count for.
    if (!this.active || this.breaker.limit === undefined) return
    const horizon = this.evidence.monotonic() - this.options.breakerWindowMs
    for (const [name, at] of this.silent) {
      if (at >= horizon) break
      this.silent.delete(name)
    }
    this.judgeZones()
    const transition = this.breaker.update(this.silent.size, this.newlyStale(), this.tracker.size)
    const limit = this.breaker.limit
    if (transition === undefined || limit === undefined) return
    const report = {transition, unhealthy: this.breaker.unhealthy, total: this.breaker.total, limit}
    if (transition === 'tripped') this.breakerSinceWall = this.options.clock.wall()
    logBreaker(this.options.logger, this.options.kind, report)
    this.options.observer.breaker?.(report)
    if (transition === 'recovered') this.restartHeld()
  }

  /**
   * The breaker closed: the pools it held start a fresh grace period instead of being marked now, as
   * Kubernetes' node lifecycle controller does when a zone leaves full disruption (it sets every
   * node's probe timestamp to now). A partition heals over a heartbeat interval: poollets renew at
   * their own phase, so when enough have come back to close the breaker, the rest are live pools whose
   * renewal is a few seconds away; marking them then would be false Unknowns. The price: a pool that
   * really died while the breaker held it is marked one grace period after the breaker closed.
   * Pools already marked stay as they are. O(overdue).
   */
  private restartHeld(zone?: string): void {
    for (const [name, overdue] of this.overdue) {
      if (zone !== undefined && this.zones.zoneOfPool(name) !== zone) continue
      // A write in flight goes on (its mark, if it lands, is reported); a confirm in flight finds the pool no longer overdue.
      if (overdue.step === 'sent' || overdue.step === 'settling' || this.alreadyUnknown(name, overdue)) continue
      this.overdue.delete(name)
      this.silent.delete(name)
      this.tracker.restart(name)
      this.arm(name)
    }
  }

  /**
   * The per-zone breakers (zone-breakers.ts), counted like the fleet's: a zone held or released is
   * said once; a zone's recovery restarts the pools it held, as the fleet's does. O(pools).
   */
  private judgeZones(): void {
    if (this.options.zoneOf === undefined) return
    const stale = [...this.overdue].filter(([name, overdue]) => !this.alreadyUnknown(name, overdue)).map(([name]) => name)
    const all = {names: () => this.tracker.names(), size: this.tracker.size}
    for (const change of this.zones.update(this.silent.keys(), stale, all, this.evidence.monotonic())) {
      if (change.transition === 'tripped') this.zoneSinceWall.set(change.zone, this.options.clock.wall())
      else this.zoneSinceWall.delete(change.zone)
      logZoneBreaker(this.options.logger, this.options.kind, change)
      this.options.observer.zoneBreaker?.(change)
      if (change.transition === 'recovered') this.restartHeld(change.zone)
    }
  }

  /** Since when a breaker holds the pool (wall ms): the earlier trip of the fleet's and its zone's, of those holding it now. */
  private heldSinceWall(name: string): number {
    const zone = this.zones.holds(name) ? this.zoneSinceWall.get(this.zones.zoneOfPool(name)!) : undefined
    const fleet = this.breaker.tripped ? this.breakerSinceWall : undefined
    return Math.min(zone ?? Infinity, fleet ?? Infinity)
  }

  /** Held by a breaker: the fleet's, or the pool's zone's. */
  private heldByBreaker(name: string): boolean {
    return this.breaker.tripped || this.zones.holds(name)
  }

  /**
   * The overdue pools that a mark would change: those already Unknown (long dead, or marked by a
   * previous leader) are not news, and counting them would keep the breaker tripped for good.
   */
  private newlyStale(): number {
    let n = 0
    for (const [name, overdue] of this.overdue) if (!this.alreadyUnknown(name, overdue)) n++
    return n
  }

  private mark(names: Iterable<string>): void {
    if (this.breaker.tripped || !this.judgeable()) return
    for (const name of names) {
      const overdue = this.overdue.get(name)
      // A pending deadline on an overdue pool is a retry's backoff, a hold or a long look: wait for it.
      if (overdue === undefined || overdue.step !== 'due' || this.deadlines.has(name)) continue
      if (this.alreadyUnknown(name, overdue)) {
        // Our write whose answer and settling read were both lost may be what made it Unknown: the watch
        // showed it while the write was out, which only the answer may settle. Read it back again.
        if (overdue.unsettled === true && !this.options.dryRun) this.resettle(name, overdue)
        continue
      }
      if (this.zones.holds(name)) continue
      // A new attempt: what it writes is a mark of its own (the pool's Ready moved off Unknown since any earlier one).
      overdue.reported = false
      overdue.step = 'confirming'
      this.notes.of(overdue).attemptAtWall = this.options.clock.wall()
      const attempt = this.confirmAndWrite(name, overdue).finally(() => {
        if (this.attempts.get(overdue) === attempt) this.attempts.delete(overdue)
      })
      this.attempts.set(overdue, attempt)
    }
  }

  /**
   * A write of ours of unknown outcome whose era ended: read back after a retry's backoff, up to
   * SETTLE_LATER_TRIES times (a read is harmless, and not tied to leadership), so that a mark that
   * landed is reported once even by a replica no longer leading; the watch may settle it first.
   * Not awaited by drain(): a replica that lost leadership must not wait on it.
   */
  private settleLater(name: string, overdue: Overdue, tries = 1): void {
    this.unsettledMarks.set(name, overdue)
    if (this.closed || overdue.unsettled !== true || this.settlingLater.has(overdue)) return
    if (tries > SETTLE_LATER_TRIES) {
      this.unsettledMarks.delete(name)
      return
    }
    this.settlingLater.add(overdue)
    const cancel = this.options.clock.setTimer(retryDelay(this.options, tries), () => {
      this.settleTimers.delete(cancel)
      this.settlingLater.delete(overdue)
      if (this.closed || this.unsettledMarks.get(name) !== overdue) return
      // A read out when the era ended may have settled it since (found not landed): nothing to read back.
      if (overdue.unsettled !== true) {
        this.unsettledMarks.delete(name)
        return
      }
      void this.settle(name, overdue).then((landed) => {
        if (landed) return
        if (overdue.unsettled === true) this.settleLater(name, overdue, tries + 1)
        else if (this.unsettledMarks.get(name) === overdue) this.unsettledMarks.delete(name)
      })
    })
    this.settleTimers.add(cancel)
  }

  /** Reads back a write of unknown outcome whose settling read failed; a failure is retried as any other. */
  private resettle(name: string, overdue: Overdue): void {
    const attempt = this.settle(name, overdue)
      .then((landed) => {
        overdue.step = 'due'
        if (landed || overdue.unsettled !== true || !this.active || this.overdue.get(name) !== overdue) return
        this.failed(name, overdue, new Error(`reading ${this.options.kind.name}pool ${name} back failed`), 'reading back its Ready=Unknown write of unknown outcome failed', false)
      })
      .finally(() => {
        if (this.attempts.get(overdue) === attempt) this.attempts.delete(overdue)
      })
    this.attempts.set(overdue, attempt)
  }

  private async confirmAndWrite(name: string, overdue: Overdue): Promise<void> {
    const era = this.era.signal
    let lease: Lease | undefined
    try {
      lease = await this.confirmations.confirm(name, era)
    } catch (error) {
      overdue.step = 'due'
      // Aborted because leadership changed: no failure, nothing to tell the sight.
      if (era.aborted) return
      // A LIST made for many pools failed: the pool whose turn it was tells the sight, once.
      if (!(error instanceof SharedFailure)) this.tellSight(overdue, error, `confirming the silence of ${this.options.kind.name}pool ${name}: ${errorMessage(error)}`)
      this.options.observer.confirmRead?.(name, 'failed')
      this.notes.of(overdue).confirm = {outcome: 'failed', atWall: this.options.clock.wall(), detail: errorMessage(error)}
      this.failed(name, overdue, error, 'reading its Lease to confirm the silence failed', false)
      return
    }
    this.options.onRequest(true)
    if (this.overdue.get(name) !== overdue || !this.active) {
      overdue.step = 'due'
      return
    }
    const renewTime = lease?.spec.renewTime
    if (renewTime !== undefined && renewTime !== this.tracker.get(name)?.renewTime) {
      // The Lease moved and the watch has not told us (yet): a sign of life, and a hint that the watch lags.
      overdue.step = 'due'
      this.options.observer.confirmRead?.(name, 'renewed')
      this.notes.of(overdue).confirm = {outcome: 'renewed', atWall: this.options.clock.wall()}
      this.options.logger.info({kind: this.options.kind.name, pool: name}, 'pool not marked: a fresh read of its Lease shows a renewal the watch had not delivered')
      if (this.tracker.observeLease(name, renewTime) === 'progress') this.progressed(name)
      return
    }
    this.options.observer.confirmRead?.(name, 'silent')
    this.notes.of(overdue).confirm = {outcome: 'silent', atWall: this.options.clock.wall()}
    if (this.heldByBreaker(name) || !this.judgeable()) {
      // Blind (or the breaker opened) while the read was out: no verdict now. Looked at again when
      // whole (the queue fires nothing before), or when the breaker recovers.
      overdue.step = 'due'
      if (!this.heldByBreaker(name)) this.deadlines.set(name, this.evidence.monotonic() + (this.whole ? this.options.retryBaseMs : 0))
      return
    }
    overdue.step = 'writing'
    if (this.options.dryRun) await this.wouldWrite(name, overdue, era)
    else await this.write(name, overdue, era)
  }

  /**
   * The dry run's write: it takes its turn in the limiter as the write would (so the others' timing is
   * what it would be), then, instead of a request, a would-mark: logged, Evented with the record,
   * counted, and the pool treated as marked until it progresses.
   */
  private async wouldWrite(name: string, overdue: Overdue, era: AbortSignal): Promise<void> {
    try {
      await this.options.limiter.run(() => Promise.resolve(), {urgent: true, signal: era})
    } catch {
      overdue.step = 'due'
      return
    }
    overdue.step = 'due'
    const pool = this.options.getPool(name)
    if (pool === undefined || this.overdue.get(name) !== overdue || this.heldByBreaker(name) || !this.judgeable() || this.alreadyUnknown(name, overdue)) {
      this.rearmOverdue(name, overdue)
      return
    }
    this.notes.of(overdue).markedAtWall = this.options.clock.wall()
    const report = markReport(name, overdue.deadline, this.evidence.monotonic(), overdue.retries)
    const verdict = this.recordOf(name, overdue)
    logWouldMark(this.options.logger, this.options.kind, report, verdict)
    this.options.events.record(withVerdict(wouldMarkEvent(this.options.kind, pool), verdict))
    this.options.observer.wouldMark?.(report)
  }

  private async write(name: string, overdue: Overdue, era: AbortSignal): Promise<void> {
    const {store, clock, getPool, limiter} = this.options
    let result: ReadyWriteResult
    let sent = false
    // A write that went out (not one declined from the cached pool before it left).
    let wrote = false
    overdue.sighted = undefined
    try {
      result = await limiter.run(
        () => {
          sent = true
          overdue.step = 'sent'
          const onSend = (ready: PoolCondition) => {
            wrote = true
            if (ready.lastTransitionTime != null) (overdue.sentStamps ??= []).push(ready.lastTransitionTime)
          }
          return writeReady({store, clock, name, current: getPool(name), decide: (pool) => this.decide(name, pool), signal: era, plan: this.options.plan, onSend})
        },
        {urgent: true, signal: era},
      )
    } catch (error) {
      const answered = isAnswer(error)
      if (sent) this.tellSight(overdue, error, `writing Ready=Unknown to ${this.options.kind.name}pool ${name}: ${errorMessage(error)}`)
      // Sent, and no answer says it did not land: the watch saw it land, or the pool is read back to know.
      const sighted = sent && !answered ? overdue.sighted : undefined
      if (sighted !== undefined) this.landed(name, overdue, sighted)
      if (sighted !== undefined || (sent && !answered && (await this.settle(name, overdue)))) {
        overdue.step = 'due'
        return
      }
      overdue.step = 'due'
      if (era.aborted) {
        // Its era is over (leadership lost while the write was out): nothing will look at the pool for
        // it again, so its read-back goes on alone until it is known whether the mark landed.
        this.settleLater(name, overdue)
        return
      }
      this.failed(name, overdue, error, 'writing Ready=Unknown failed', true)
      return
    }
    overdue.step = 'due'
    // Only a write that went out is an answer for the sight: one declined before it left (decided on the
    // cached pool, the view blind or the breaker open by its turn) says nothing of the API, and counted
    // as an answer it would dilute the failures that make the sight blind.
    if (wrote) this.options.onRequest(true)
    if (result.outcome === 'declined' || (result.outcome === 'unchanged' && readyOf(result.pool).status !== 'Unknown')) {
      // Not written, and the pool may still be overdue (the view turned blind, or the breaker opened,
      // while the write waited its turn): it must have a next look, or nothing would look at it again.
      this.rearmOverdue(name, overdue)
      return
    }
    if (result.outcome === 'not-writable' || result.outcome === 'not-held') {
      // Staleness reported (once a spell), never claimed as a mark: nothing was stored. Looked at
      // again after a long backoff: what dropped the mark (a webhook, an old CRD) may be gone by then.
      overdue.step = 'unmarkable'
      if (this.active && this.overdue.get(name) === overdue) this.deadlines.set(name, this.evidence.monotonic() + this.options.unmarkableRetryMs)
      const notes = this.notes.of(overdue)
      if (notes.unmarkableTold === true) return
      notes.unmarkableTold = true
      const report = {name, reason: result.outcome === 'not-writable' ? 'no-conditions' : 'not-held'} as const
      logUnmarkable(this.options.logger, this.options.kind, report)
      this.options.events.record(withVerdict(unmarkableEvent(this.options.kind, result.pool, report.reason), this.recordOf(name, overdue)))
      this.options.observer.unmarkable?.(report)
      return
    }
    if (result.outcome === 'written') this.landed(name, overdue, result.pool)
    // An earlier write of unknown outcome had landed: this attempt found the mark already there.
    else if (overdue.unsettled && result.outcome !== 'not-found' && this.isOurWrite(result.pool, overdue)) this.landed(name, overdue, result.pool)
  }

  /**
   * A write failed without an answer (or was aborted) after it was sent: it may have landed. Reads the
   * pool back (bounded, not tied to leadership: a read is harmless) and reports the mark if it did.
   * Returns whether it landed; when the read fails too, the next sight of the pool settles it.
   */
  private async settle(name: string, overdue: Overdue): Promise<boolean> {
    const {clock, confirmTimeoutMs, store, limiter} = this.options
    overdue.step = 'settling'
    overdue.unsettled = true
    let pool: Pool | undefined
    try {
      pool = await limiter.run(
        () => bounded((signal) => store.get(name, signal), {clock, timeoutMs: confirmTimeoutMs, timeoutError: () => new Error(`get ${name}: no answer within ${confirmTimeoutMs} ms`)}),
        {urgent: true},
      )
    } catch {
      return false
    }
    if (pool === undefined || !this.isOurWrite(pool, overdue)) {
      overdue.unsettled = false
      return false
    }
    this.landed(name, overdue, pool)
    return true
  }

  /** Whether the pool carries the kind's Unknown, i.e. this controller's mark. */
  private isOurMark(pool: Pool): boolean {
    const ready = pool.status?.conditions?.find((c) => c.type === 'Ready')
    return ready?.status === 'Unknown' && ready.reason === this.options.kind.unknownReason
  }

  /**
   * Whether the pool carries a mark this spell sent: the kind's Unknown with one of the
   * lastTransitionTimes it wrote (where the API keeps that field; else the kind's Unknown will do).
   */
  private isOurWrite(pool: Pool, overdue: Overdue): boolean {
    if (!this.isOurMark(pool)) return false
    const stamp = pool.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime
    return stamp == null || overdue.sentStamps === undefined || overdue.sentStamps.includes(stamp)
  }

  /** A mark of ours landed: absorbed, logged, Evented and counted, once. */
  private landed(name: string, overdue: Overdue, pool: Pool): void {
    overdue.unsettled = false
    this.unsettledMarks.delete(name)
    if (overdue.reported) return
    overdue.reported = true
    // The record is taken before the mark is absorbed: its last progress shows what the poollet left.
    this.notes.of(overdue).markedAtWall = this.options.clock.wall()
    const verdict = this.recordOf(name, overdue, 'marked')
    // Absorbed only while still overdue: after progress or a restart, the record holds newer news.
    if (this.overdue.get(name) === overdue) this.tracker.recordOwnWrite(name, readyOf(pool))
    const report = markReport(name, overdue.deadline, this.evidence.monotonic(), overdue.retries)
    logMark(this.options.logger, this.options.kind, report, verdict)
    this.options.events.record(withVerdict(unknownEvent(this.options.kind, pool), verdict))
    this.options.observer.marked?.(report)
  }

  /**
   * Called by writeReady with the cached pool, and again with each re-read after a conflict. A re-read
   * pool is an observation like any other: if it shows progress, the pool is no longer overdue.
   */
  private decide(name: string, pool: Pool): Omit<DesiredCondition, 'type'> | undefined {
    if (this.heldByBreaker(name) || !this.tracker.has(name) || !this.judgeable()) return undefined
    this.poolUpserted(pool)
    const record = this.tracker.get(name)
    if (record === undefined || !this.overdue.has(name)) return undefined
    if (this.evidence.monotonic() - record.lastChange < this.options.gracePeriodMs) return undefined
    if (readyOf(pool).status === 'Unknown') return undefined
    return unknownReady(this.options.kind, pool)
  }

  /**
   * A request of this pool's failed: an answer (the API refused it: 4xx but 429) is an answer for the
   * sight; any other failure is told once per overdue pool (see Overdue.failureTold).
   */
  private tellSight(overdue: Overdue, error: unknown, detail: string): void {
    if (isAnswer(error)) {
      this.options.onRequest(true)
      return
    }
    if (overdue.failureTold) return
    overdue.failureTold = true
    this.options.onRequest(false, detail)
  }

  /** A look for an overdue pool whose attempt ended without a verdict: soon when whole, at once when whole again if blind. */
  private rearmOverdue(name: string, overdue: Overdue): void {
    if (!this.active || this.overdue.get(name) !== overdue || this.deadlines.has(name)) return
    if (this.heldByBreaker(name)) return // the breaker's recovery restarts what it held
    this.deadlines.set(name, this.evidence.monotonic() + (this.whole ? this.options.retryBaseMs : 0))
  }

  private failed(name: string, overdue: Overdue, error: unknown, what: string, wasWrite: boolean): void {
    overdue.step = 'retrying'
    overdue.retries++
    const delay = retryDelay(this.options, overdue.retries)
    const fields = {kind: this.options.kind.name, pool: name, err: errorMessage(error), retries: overdue.retries, retryInMs: delay}
    this.options.logger.error(fields, what)
    const notes = this.notes.of(overdue)
    Object.assign(notes, {lastError: `${what}: ${errorMessage(error)}`, lastErrorAtWall: this.options.clock.wall()})
    if (wasWrite) this.options.observer.writeFailed?.(name, error)
    // A pool held by its own failing write (twice: once is a blip) is said once per spell, with its record, for `pool why`.
    const pool = this.options.getPool(name)
    if (wasWrite && overdue.retries >= 2 && !notes.troubleTold && pool !== undefined && this.overdue.get(name) === overdue) {
      notes.troubleTold = true
      this.options.events.record(withVerdict(writeRetryingEvent(this.options.kind, pool, errorMessage(error)), this.recordOf(name, overdue, 'retrying')))
    }
    if (this.active && this.overdue.get(name) === overdue) this.deadlines.set(name, this.evidence.monotonic() + delay)
  }

  /**
   * Whether the pool counts as marked already: Ready=Unknown as the watch shows it (our mark, a
   * previous leader's, or one seen at first sight); in a dry run, also a would-mark of this spell, and
   * not another controller's mark made while this engine watched (see foreignMarks).
   */
  private alreadyUnknown(name: string, overdue: Overdue | undefined): boolean {
    if (this.options.dryRun && overdue !== undefined && this.notes.of(overdue).markedAtWall !== undefined) return true
    if (this.options.dryRun && this.foreignMarks.has(name)) return false
    return this.tracker.get(name)?.readyStatus === 'Unknown'
  }

  /**
   * The one place an overdue pool's state, as the verdict record shows it, is read from the engine:
   * its step, under what holds the whole engine (the mark, leadership, the view, a breaker). The hold
   * says what holds a 'held' pool.
   */
  private overdueStateOf(name: string, overdue: Overdue): {state: OverdueState; hold?: HoldReason} {
    if (this.alreadyUnknown(name, overdue)) return {state: 'marked'}
    const {step} = overdue
    if (step === 'unmarkable' || step === 'confirming' || step === 'settling') return {state: step}
    if (step === 'writing' || step === 'sent') return {state: 'writing'}
    if (!this.active) return {state: 'held', hold: 'not-leader'}
    if (!this.whole) return {state: 'held', hold: 'blind'}
    if (this.heldByBreaker(name)) return {state: 'held', hold: 'breaker'}
    if (step === 'held') return {state: 'held', hold: 'breaker-window'}
    return {state: step}
  }

  /** The verdict record of an overdue pool, as of now (state given when the caller knows it better than the bookkeeping says yet). */
  private recordOf(name: string, overdue: Overdue, stateNow?: OverdueState): VerdictRecord {
    const {clock, kind} = this.options
    const record = this.tracker.get(name)
    const derived = stateNow === undefined ? this.overdueStateOf(name, overdue) : {state: stateNow}
    const notes = this.notes.of(overdue)
    const wallNow = clock.wall()
    const evidenceNow = this.evidence.monotonic()
    const lastChange = record?.lastChange ?? evidenceNow
    const blind = this.ledger.after(record?.cutOutAtChange ?? this.evidence.cutOutMs, this.evidence.cutOutMs)
    // The wall time of an evidence instant: now, less the evidence time since, less the blind time since.
    const wallOf = (at: number) => wallNow - (evidenceNow - at) - this.ledger.since(at, this.evidence.cutOutMs).ms
    const blindAt = this.ledger.blindAt
    const since =
      derived.state === 'marked' ? (notes.markedAtWall ?? wallNow)
      : derived.state === 'retrying' ? (notes.lastErrorAtWall ?? wallNow)
      : derived.state === 'confirming' || derived.state === 'writing' ? (notes.attemptAtWall ?? wallNow)
      : derived.hold === 'blind' && blindAt !== undefined ? wallOf(blindAt)
      : derived.hold === 'breaker' ? this.heldSinceWall(name)
      : wallOf(overdue.deadline)
    const next = this.nextLook(name)
    return buildVerdict({
      kind: kind.name,
      pool: name,
      uid: record?.uid,
      controller: this.options.identity,
      dryRun: this.options.dryRun,
      ...derived,
      stateSinceWall: since,
      renewTime: record?.renewTime,
      leaseResourceVersion: this.options.getLease(name)?.resourceVersion,
      readyStatus: record?.readyStatus,
      lastChange,
      evidenceNow,
      wallNow,
      blind,
      gracePeriodMs: this.options.gracePeriodMs,
      notes,
      retries: overdue.retries,
      breaker: this.breaker.limit === undefined ? undefined : this.breakerState,
      limiter: {queued: this.options.limiter.queued, inFlight: this.options.limiter.inFlight},
      nextLookInMs: next === undefined ? undefined : next - clock.monotonic(),
    })
  }
}
