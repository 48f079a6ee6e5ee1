/**
 * Building the verdict record (verdict.ts) from what the engine knows: the blind ledger (which spells
 * of blindness were cut out of a pool's silence, and why), the facts noted per overdue spell of a
 * pool (the confirming read's outcome, the last error, when it was marked or would have been), and a
 * pure function that assembles the record. The engine keeps the state machine; this module only
 * reads it, so the state's derivation (PoolLifecycle.overdueStateOf) stays in one place.
 */
import type {BlindReason} from './sight/sight.ts'
import {VERDICT_VERSION, type VerdictRecord} from './verdict.ts'

/** One blind spell as the evidence clock saw it: the evidence instant it stood still at, and why. */
interface Spell {
  /** Evidence-clock instant at which the clock stood still (blind time after it is cut out). */
  at: number
  reason: BlindReason | 'unknown'
  /** Blind time cut out by the end of this spell, all spells so far together (ms). */
  cutOutAfter: number
}

/**
 * Spells kept: a pool's record names the spells since its last progress; a controller blind more
 * than this many times since a pool's last sign of life reports the older spells' time (it is in
 * the totals) but not their reasons.
 */
export const MAX_SPELLS = 256

/**
 * The blind spells cut out of the evidence clock, so a record can say how much blind time lies
 * between a pool's last progress and now, and why. O(1) per spell; bounded by {@link MAX_SPELLS}.
 */
export class BlindLedger {
  private readonly spells: Spell[] = []
  /** The newest spell dropped from the ledger (its instant and the cut-out time by its end). */
  private dropped: Spell | undefined
  private current: {at: number; reason: BlindReason | 'unknown'} | undefined

  /** The view turned blind; the evidence clock now stands still at `at`. */
  stopped(at: number, reason: BlindReason | undefined): void {
    this.current = {at, reason: reason ?? 'unknown'}
  }

  /** The view is whole again; cutOutMs is the evidence clock's whole cut-out time now. */
  resumed(cutOutMs: number): void {
    if (this.current === undefined) return
    this.spells.push({...this.current, cutOutAfter: cutOutMs})
    this.current = undefined
    if (this.spells.length > MAX_SPELLS) this.dropped = this.spells.shift()
  }

  /**
   * Blind time cut out since the cut-out stood at `cutOutThen` (a pool's last change), and the
   * reasons of the spells that accrued it, in order, deduplicated. Exact whatever the evidence clock
   * did meanwhile (a spell seen late steps it back past a pool's progress: that overlap is blind time
   * after the progress, and the silence is shorter by as much).
   */
  after(cutOutThen: number, cutOutNowMs: number): {ms: number; reasons: string[]} {
    const reasons: string[] = []
    for (const spell of this.spells) if (spell.cutOutAfter > cutOutThen && !reasons.includes(spell.reason)) reasons.push(spell.reason)
    if (this.current !== undefined && cutOutNowMs > cutOutThen && !reasons.includes(this.current.reason)) reasons.push(this.current.reason)
    return {ms: Math.max(0, cutOutNowMs - cutOutThen), reasons}
  }

  /** The evidence instant the current spell stands still at, if blind. */
  get blindAt(): number | undefined {
    return this.current?.at
  }

  /**
   * Blind time cut out after evidence instant `from`, and the reasons, in order, deduplicated.
   * cutOutNowMs is the evidence clock's whole cut-out time now (an ongoing spell included). A spell
   * that stood still at `from` itself is taken as before it: progress seen during a spell (the watches
   * deliver while the probe fails) carries the frozen instant, and is not followed by all of the spell.
   * The price: a spell that began the very millisecond of evidence time after a pool's progress is
   * not named in its record (its time is still not silence).
   */
  since(from: number, cutOutNowMs: number): {ms: number; reasons: string[]} {
    // Cut-out time before `from`: exact unless spells dropped from the ledger lie after it (a pool silent
    // through more than MAX_SPELLS spells), when their time counts and their reasons are not named.
    let before = this.dropped !== undefined && this.dropped.at <= from ? this.dropped.cutOutAfter : 0
    const reasons: string[] = []
    for (const spell of this.spells) {
      if (spell.at <= from) before = spell.cutOutAfter
      else if (!reasons.includes(spell.reason)) reasons.push(spell.reason)
    }
    if (this.current !== undefined && this.current.at > from && !reasons.includes(this.current.reason)) reasons.push(this.current.reason)
    return {ms: Math.max(0, cutOutNowMs - before), reasons}
  }
}

/** What the engine notes about one overdue spell of a pool, beside its state machine. */
export interface VerdictNotes {
  confirm?: {outcome: 'silent' | 'renewed' | 'failed'; atWall: number; detail?: string}
  lastError?: string
  lastErrorAtWall?: number
  /** When the current attempt (confirming read, then write) began. */
  attemptAtWall?: number
  /** When the mark landed, or (dry run) would have been written. */
  markedAtWall?: number
  /** Whether an Event has already carried a record of this spell's trouble (one per spell). */
  troubleTold?: boolean
  /** Whether this spell's unmarkable pool was reported (log, Event, metric): once a spell, however often it is tried. */
  unmarkableTold?: boolean
}

/**
 * The notes of each overdue spell, keyed by the engine's own entry for that spell: a new spell is a
 * new entry, so nothing is ever cleared by hand, and a forgotten entry takes its notes with it.
 */
export class VerdictNotebook {
  private readonly notes = new WeakMap<object, VerdictNotes>()

  of(spell: object): VerdictNotes {
    let notes = this.notes.get(spell)
    if (notes === undefined) {
      notes = {}
      this.notes.set(spell, notes)
    }
    return notes
  }
}

/** Everything a record is made of, as the engine reads it at one instant. */
export interface VerdictFacts extends Pick<VerdictRecord, 'kind' | 'pool' | 'uid' | 'controller' | 'dryRun' | 'state' | 'hold'> {
  /** When the pool entered its state (wall ms). */
  stateSinceWall: number
  renewTime?: string
  leaseResourceVersion?: string
  readyStatus?: string
  /** The pool's last progress on the evidence clock, and the evidence clock now. */
  lastChange: number
  evidenceNow: number
  wallNow: number
  blind: {ms: number; reasons: string[]}
  gracePeriodMs: number
  notes: VerdictNotes
  retries: number
  breaker?: {tripped: boolean; unhealthy: number; total: number}
  limiter: {queued: number; inFlight: number}
  /** When the engine looks next, in ms from now (real time), if it will. */
  nextLookInMs?: number
}

const iso = (wall: number) => new Date(wall).toISOString()

/**
 * The record. Silence is the evidence clock's (blind time cut out); the last progress's wall time is
 * now minus the silence minus the blind time since, so the three add up on the controller's clock.
 */
export function buildVerdict(facts: VerdictFacts): VerdictRecord {
  // Whole milliseconds: a record is read by people and compared by scripts.
  const silenceMs = Math.max(0, Math.round(facts.evidenceNow - facts.lastChange))
  const blindMs = Math.round(facts.blind.ms)
  const {notes} = facts
  const record: VerdictRecord = {
    version: VERDICT_VERSION,
    kind: facts.kind,
    pool: facts.pool,
    ...(facts.uid === undefined ? {} : {uid: facts.uid}),
    controller: facts.controller,
    dryRun: facts.dryRun,
    state: facts.state,
    stateSince: iso(facts.stateSinceWall),
    ...(facts.hold === undefined ? {} : {hold: facts.hold}),
    lastProgress: {
      ...(facts.renewTime === undefined ? {} : {renewTime: facts.renewTime}),
      ...(facts.leaseResourceVersion === undefined ? {} : {leaseResourceVersion: facts.leaseResourceVersion}),
      ...(facts.readyStatus === undefined ? {} : {readyStatus: facts.readyStatus}),
      observedAt: iso(facts.wallNow - silenceMs - blindMs),
    },
    gracePeriodMs: facts.gracePeriodMs,
    silenceMs,
    blindExcludedMs: blindMs,
    blindReasons: facts.blind.reasons,
    ...(notes.confirm === undefined ? {} : {confirm: {outcome: notes.confirm.outcome, at: iso(notes.confirm.atWall), ...(notes.confirm.detail === undefined ? {} : {detail: notes.confirm.detail})}}),
    retries: facts.retries,
    ...(notes.lastError === undefined ? {} : {lastError: notes.lastError}),
    ...(facts.breaker === undefined ? {} : {breaker: facts.breaker}),
    limiter: facts.limiter,
    ...(facts.nextLookInMs === undefined ? {} : {nextLookAt: iso(facts.wallNow + Math.max(0, facts.nextLookInMs))}),
    at: iso(facts.wallNow),
  }
  return record
}

/** The record as an Event annotation carries it. */
export function verdictAnnotation(record: VerdictRecord): string {
  return JSON.stringify(record)
}

/**
 * A record read back from an Event's annotation: undefined when absent, not JSON, or of a newer
 * version than this reader knows (a newer controller's record is not guessed at).
 */
export function parseVerdict(text: string | undefined): VerdictRecord | undefined {
  if (text === undefined) return undefined
  try {
    const value = JSON.parse(text) as Partial<VerdictRecord> | null
    if (value === null || typeof value !== 'object' || value.version !== VERDICT_VERSION || typeof value.pool !== 'string' || typeof value.state !== 'string') return undefined
    return value as VerdictRecord
  } catch {
    return undefined
  }
}
