/**
 * Confirming reads, many at a time when many are due. Each overdue pool's confirmation waits its turn
 * in the request limiter as a GET of its Lease; when its turn comes and at least {@link
 * BATCH_CONFIRM_MIN} other confirmations (and more than the LIST has pages) wait behind it, one consistent LIST of the lease namespace
 * answers all of them instead, and their places in the queue are given back. So a mass death queues
 * its writes only (one request per dead pool, not two), and a single silent pool still costs one
 * cheap GET.
 *
 * A LIST without a resourceVersion is a quorum read, as fresh as each GET would have been, and it
 * went out after every confirmation it answers was asked for: a renewal the watch has not delivered
 * shows in it exactly as in a GET. A LIST that fails fails the confirmations it answers; only one of
 * them (the one whose turn it was) is the request's failure for the sight: the others are marked
 * {@link SharedFailure}.
 */
import {bounded} from '../bounded.ts'
import type {Clock} from '../clock.ts'
import type {Lease} from '../types.ts'
import type {RequestLimiter} from './request-limiter.ts'

/** Confirmations waiting besides the one whose turn it is, for a LIST to answer them all. */
export const BATCH_CONFIRM_MIN = 16
/**
 * The Leases a LIST reads a page at a time. A LIST of a namespace of n Leases is about n/500
 * requests' worth of work: it pays only when more confirmations wait than it has pages (at 100,000
 * pools, 200). Listing 100k Leases for 17 due pools, under a fixed 10 s deadline, held a mass death
 * at 100k pools to a p99 of 24.8 s (bench:scale).
 */
export const LIST_PAGE = 500
/**
 * A LIST's deadline per page, when its pages make it longer than twice a GET's: 20 s for 100k
 * Leases. Not more: a paginated LIST shows the namespace as of its first page, so a long one confirms
 * a silence that old.
 */
export const LIST_PAGE_MS = 100

/** A failure of a request made for another pool's confirmation too: told to the sight once, by that pool. */
export class SharedFailure extends Error {
  override readonly name = 'SharedFailure'
}

interface Waiting {
  name: string
  resolve: (lease: Lease | undefined) => void
  reject: (error: Error) => void
  /** Gives back its place in the limiter's queue once a LIST answered it. */
  slot: AbortController
  /** Its turn came: its own request is out. */
  started: boolean
}

export interface ConfirmBatcherOptions {
  clock: Clock
  /** The limiter every confirmation waits its turn in (read at each call). */
  limiter: () => RequestLimiter
  /** The pool's Lease, fresh from the API. */
  get: (name: string, signal: AbortSignal) => Promise<Lease | undefined>
  /**
   * Every Lease of the kind's namespace, fresh (a consistent list), or only those named (the batch's);
   * undefined: one GET per pool.
   */
  list: () => ((signal: AbortSignal, names: ReadonlySet<string>) => Promise<readonly Lease[]>) | undefined
  /** Bounds a GET; a LIST gets twice as long, or {@link LIST_PAGE_MS} a page if that is longer. */
  timeoutMs: number
  /** How many pages a LIST of the namespace takes (its Leases / {@link LIST_PAGE}). Default 1. */
  listPages?: () => number
  timeoutError: (name: string) => Error
}

export class ConfirmBatcher {
  private readonly o: ConfirmBatcherOptions
  private readonly waiting = new Map<Waiting, true>()
  /** LISTs sent (for tests and benches). */
  lists = 0

  constructor(options: ConfirmBatcherOptions) {
    this.o = options
  }

  /** The pool's Lease as the API has it now; rejects when the read failed, was slow, or era aborted. */
  confirm(name: string, era: AbortSignal): Promise<Lease | undefined> {
    return new Promise((resolve, reject) => {
      const slot = new AbortController()
      const entry: Waiting = {name, resolve, reject, slot, started: false}
      this.waiting.set(entry, true)
      const done = () => this.waiting.delete(entry)
      const onEra = () => {
        done()
        reject(era.reason instanceof Error ? era.reason : new Error('aborted'))
      }
      era.addEventListener('abort', onEra, {once: true})
      const settle = (fn: () => void) => {
        era.removeEventListener('abort', onEra)
        done()
        fn()
      }
      entry.resolve = (lease) => settle(() => resolve(lease))
      entry.reject = (error) => settle(() => reject(error))
      this.o
        .limiter()
        .run(() => this.turn(entry, era), {signal: AbortSignal.any([era, slot.signal])})
        .catch((error: unknown) => {
          // A place given back (answered by a LIST) is no failure; an aborted era was told above.
          if (!slot.signal.aborted && !era.aborted) entry.reject(error instanceof Error ? error : new Error(String(error)))
        })
    })
  }

  /** This confirmation's turn in the limiter: its own GET, or a LIST for everyone waiting. */
  private async turn(self: Waiting, era: AbortSignal): Promise<void> {
    if (!this.waiting.has(self)) return
    self.started = true
    const {clock, timeoutMs} = this.o
    const list = this.o.list()
    const queued = [...this.waiting.keys()].filter((e) => e === self || !e.started)
    const pages = Math.max(1, Math.ceil(this.o.listPages?.() ?? 1))
    if (list === undefined || queued.length <= Math.max(BATCH_CONFIRM_MIN, pages)) {
      const lease = await bounded((signal) => this.o.get(self.name, signal), {clock, timeoutMs, signal: era, timeoutError: () => this.o.timeoutError(self.name)})
      self.resolve(lease)
      return
    }
    // Everyone waiting now is answered by this LIST, sent after each of them asked.
    const batch = queued
    for (const entry of batch) entry.started = true
    for (const entry of batch) if (entry !== self) entry.slot.abort()
    this.lists++
    let leases: readonly Lease[]
    try {
      const names = new Set(batch.map((entry) => entry.name))
      leases = await bounded((signal) => list(signal, names), {clock, timeoutMs: Math.max(2 * timeoutMs, pages * LIST_PAGE_MS), signal: era, timeoutError: () => this.o.timeoutError(`${batch.length} pools (a list of their namespace)`)})
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error))
      for (const entry of batch) entry.reject(entry === self ? failure : new SharedFailure(failure.message, {cause: failure}))
      return
    }
    const byName = new Map(leases.map((l) => [l.name, l]))
    for (const entry of batch) entry.resolve(byName.get(entry.name))
  }
}
