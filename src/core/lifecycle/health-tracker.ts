/**
 * What the controller remembers about each pool's signs of life, and when it last saw one on its own
 * clock. Poollet timestamps are compared only for equality, never with the controller's clock, so clock
 * skew between the two cannot make a pool look alive or dead.
 */
import type {Clock} from '../clock.ts'
import {findCondition} from '../conditions.ts'
import {READY_CONDITION} from '../pool-kinds.ts'
import type {ConditionStatus, Pool} from '../types.ts'

/** The part of a pool's Ready condition that the tracker compares. */
export interface ReadySeen {
  status: ConditionStatus | undefined
  observedGeneration: number
}

export interface HealthRecord {
  /** The pool's UID when first seen: the same name with another UID is another pool. */
  readonly uid: string | undefined
  /** The last Lease renewTime seen; an opaque string, compared for equality only. */
  readonly renewTime: string | undefined
  readonly readyStatus: ConditionStatus | undefined
  readonly observedGeneration: number
  /** The controller's monotonic clock when the pool was first seen or last progressed. */
  readonly lastChange: number
  /**
   * The blind time cut out of the clock so far, read at lastChange: the blind time since the last
   * change is the cut-out now less this (exact even when a spell seen late steps the clock back past it).
   */
  readonly cutOutAtChange: number
}

/** 'new' on first sight, 'progress' when the grace period restarts, 'same' otherwise. */
export type Observation = 'new' | 'progress' | 'same'

interface MutableRecord {
  uid: string | undefined
  renewTime: string | undefined
  readyStatus: ConditionStatus | undefined
  observedGeneration: number
  lastChange: number
  cutOutAtChange: number
}

export function readyOf(pool: Pool): ReadySeen {
  const ready = findCondition(pool.status?.conditions, READY_CONDITION)
  return {status: ready?.status, observedGeneration: ready?.observedGeneration ?? 0}
}

export class HealthTracker {
  private readonly records = new Map<string, MutableRecord>()
  private readonly clock: Clock
  private readonly cutOut: () => number

  /** cutOut: the blind time cut out of clock so far (EvidenceClock.cutOutMs); default none. */
  constructor(clock: Clock, cutOut: () => number = () => 0) {
    this.clock = clock
    this.cutOut = cutOut
  }

  get size(): number {
    return this.records.size
  }

  get(name: string): HealthRecord | undefined {
    return this.records.get(name)
  }

  has(name: string): boolean {
    return this.records.has(name)
  }

  names(): IterableIterator<string> {
    return this.records.keys()
  }

  /**
   * Records the pool's Ready as seen now. On first sight the grace period starts now, and renewTime
   * seeds the record (the Lease as the cache holds it) so that a Lease seen before its pool is not
   * taken for a renewal later. A pool whose UID differs from the one recorded was deleted and
   * created again under the same name (perhaps unseen, during a relist): it is a new pool, and
   * inherits nothing of the old one's silence.
   *
   * A change counts as progress only when the new Ready is True or False, i.e. written by a poollet.
   * Unknown is written by a controller (this one or a previous leader), and a missing Ready is written
   * by nobody; treating either as progress would let the controller's own mark restart the grace
   * period, and whether its watch event or its write response arrives first would decide that.
   */
  observePool(name: string, ready: ReadySeen, renewTime?: () => string | undefined, uid?: string): Observation {
    const record = this.records.get(name)
    const replaced = record !== undefined && uid !== undefined && record.uid !== undefined && record.uid !== uid
    if (record === undefined || replaced) {
      this.records.set(name, {
        uid,
        renewTime: renewTime?.(),
        readyStatus: ready.status,
        observedGeneration: ready.observedGeneration,
        lastChange: this.clock.monotonic(),
        cutOutAtChange: this.cutOut(),
      })
      return 'new'
    }
    record.uid ??= uid
    const changed = record.readyStatus !== ready.status || record.observedGeneration !== ready.observedGeneration
    record.readyStatus = ready.status
    record.observedGeneration = ready.observedGeneration
    if (!changed || (ready.status !== 'True' && ready.status !== 'False')) return 'same'
    record.lastChange = this.clock.monotonic()
    record.cutOutAtChange = this.cutOut()
    return 'progress'
  }

  /**
   * Records a Lease renewTime. A Lease of an untracked pool is ignored (the pool's first sight reads
   * the Lease). A missing renewTime is no renewal and keeps the last one seen, so a Lease that loses
   * and regains the same renewTime shows no progress.
   */
  observeLease(name: string, renewTime: string | undefined): Observation | 'untracked' {
    const record = this.records.get(name)
    if (record === undefined) return 'untracked'
    if (renewTime === undefined || renewTime === record.renewTime) return 'same'
    record.renewTime = renewTime
    record.lastChange = this.clock.monotonic()
    record.cutOutAtChange = this.cutOut()
    return 'progress'
  }

  /** Absorbs the controller's own write: the record shows what was written, and the grace period does not restart. */
  recordOwnWrite(name: string, ready: ReadySeen): void {
    const record = this.records.get(name)
    if (record === undefined) return
    record.readyStatus = ready.status
    record.observedGeneration = ready.observedGeneration
  }

  /** The pool's grace period starts now (the breaker that held it closed). */
  restart(name: string): void {
    const record = this.records.get(name)
    if (record === undefined) return
    record.lastChange = this.clock.monotonic()
    record.cutOutAtChange = this.cutOut()
  }

  /** Every pool's grace period starts now (view whole again, leadership gained). */
  restartAll(): void {
    const now = this.clock.monotonic()
    const cutOut = this.cutOut()
    for (const record of this.records.values()) {
      record.lastChange = now
      record.cutOutAtChange = cutOut
    }
  }

  forget(name: string): boolean {
    return this.records.delete(name)
  }
}
