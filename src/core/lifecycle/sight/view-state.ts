/**
 * Whether one kind's view is whole, from every source of evidence (the sight, the pool watch, the
 * Lease watch), with the reason when it is not and how long each blind spell lasted. Each change is
 * logged once and reported to the observer, which feeds metrics, /readyz and an Event.
 */
import {BLIND_REASONS, type BlindReason} from './sight.ts'
import type {Clock} from '../../clock.ts'
import type {Logger} from '../../ports.ts'

export interface BlindSpell {
  /** The reason the spell began with. */
  reason: BlindReason
  /** Every reason seen during the spell, in order. */
  reasons: BlindReason[]
  durationMs: number
  /**
   * Whether events may have been missed during it (this process paused, a cache relisted): then every
   * grace period starts afresh; else the silence seen before the spell still counts after it.
   */
  lost: boolean
}

/** How a change of the view came about. */
export interface ViewChange {
  /** Turning blind: the spell began this long ago already (a pause is seen only once over). */
  sinceMs: number
  /** Turning whole: events may have been missed during the spell (see BlindSpell.lost). */
  lost: boolean
}

export interface ViewObserver {
  /** The view turned whole (true) or not (false). */
  changed?(whole: boolean, reason: BlindReason | undefined, how: ViewChange): void
  /** Time spent blind for one reason, reported when the reason changes or the spell ends. */
  blindFor?(reason: BlindReason, ms: number): void
  /** A blind spell ended. */
  spellEnded?(spell: BlindSpell): void
}

interface Input {
  reason: BlindReason
  detail?: string
}

export class ViewState {
  private readonly inputs = new Map<string, Input>()
  private readonly clock: Clock
  private readonly logger: Logger
  private readonly fields: object
  private readonly observer: ViewObserver
  private current: BlindReason | undefined
  private since: number
  private spell: {start: number; reasons: BlindReason[]; lost: boolean} | undefined

  /** Starts blind ('not-synced') on every source: nothing is trusted before each has said otherwise. */
  constructor(options: {clock: Clock; logger: Logger; sources: readonly string[]; fields?: object; observer?: ViewObserver}) {
    this.clock = options.clock
    this.logger = options.logger
    this.fields = options.fields ?? {}
    this.observer = options.observer ?? {}
    this.since = options.clock.monotonic()
    for (const source of options.sources) this.inputs.set(source, {reason: 'not-synced', detail: 'not yet reported'})
    this.current = 'not-synced'
    this.spell = {start: this.since, reasons: ['not-synced'], lost: true}
  }

  get whole(): boolean {
    return this.current === undefined
  }

  get reason(): BlindReason | undefined {
    return this.current
  }

  /**
   * What the source says now: blind for a reason, or (undefined) nothing against the view. sinceMs:
   * the source has been blind that long already (a pause is seen only once it is over), so a spell
   * that begins now is counted from then.
   */
  set(source: string, reason: BlindReason | undefined, detail?: string, sinceMs = 0): void {
    if (reason === undefined) this.inputs.delete(source)
    else this.inputs.set(source, {reason, detail})
    this.update(source, sinceMs)
  }

  /** The source may have missed events during the current spell (a cache relisted): grace periods restart after it. */
  eventsMissed(): void {
    if (this.spell !== undefined) this.spell.lost = true
  }

  private update(source: string, sinceMs: number): void {
    const top = this.top()
    const next = top?.reason
    if (next === this.current) return
    // Backdated only for a spell that begins now: one that goes on has been counted all along.
    const backdateMs = this.current === undefined ? Math.max(0, sinceMs) : 0
    const now = this.clock.monotonic() - backdateMs
    if (this.current !== undefined) this.observer.blindFor?.(this.current, now - this.since)
    const was = this.current
    this.current = next
    this.since = now
    if (next !== undefined) {
      if (this.spell === undefined) {
        this.spell = {start: now, reasons: [next], lost: next === 'paused'}
        this.logger.warn({...this.fields, reason: next, source, detail: top?.detail}, `view not whole (${next}): marking nothing until it is`)
        this.observer.changed?.(false, next, {sinceMs: backdateMs, lost: false})
      } else {
        if (next === 'paused') this.spell.lost = true
        this.spell.reasons.push(next)
        this.logger.info({...this.fields, reason: next, was, source, detail: top?.detail}, `view still not whole, now ${next}`)
      }
      return
    }
    const spell = this.spell
    this.spell = undefined
    const durationMs = spell === undefined ? 0 : now - spell.start
    const first = spell?.reasons[0] ?? 'not-synced'
    const lost = spell?.lost ?? true
    const what = lost ? 'every grace period starts now' : 'silence counts again, blind time not counted'
    this.logger.info({...this.fields, reason: first, reasons: spell?.reasons ?? [], blindMs: Math.round(durationMs), lost}, `view whole again: ${what}`)
    this.observer.changed?.(true, undefined, {sinceMs: 0, lost})
    this.observer.spellEnded?.({reason: first, reasons: spell?.reasons ?? [], durationMs, lost})
  }

  /** The most telling reason among the sources, with its detail. */
  private top(): Input | undefined {
    let best: Input | undefined
    for (const input of this.inputs.values()) {
      if (best === undefined || BLIND_REASONS.indexOf(input.reason) < BLIND_REASONS.indexOf(best.reason)) best = input
    }
    return best
  }
}
