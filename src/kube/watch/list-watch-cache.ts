/**
 * A list+watch cache for one resource, built on client-node's Watch because its informer stops for good
 * on most errors and never relists. The loop is client-go's reflector reduced to what ironpool needs:
 * list (all pages) → store → watch from the list's resourceVersion with bookmarks; a 410 Gone or a watch
 * that cannot be reopened → relist; any other end → reopen from the last resourceVersion; every retry
 * waits a bounded, jittered backoff; a watchdog restarts a silent stream; a periodic relist reconciles.
 *
 * isWhole() is true only after a list has completed and while a watch is established or has been for
 * less than gapToleranceMs: a gap between streams (a routine close, a broken stream, a relist, a
 * reconnect that gets no answer, a backoff) is blindness once it lasts longer than that. A quick
 * reconnect is not: it resumes from the last resourceVersion and the server replays what happened
 * meanwhile, so nothing is missed, and the controller's grace periods are not restarted by routine
 * reconnects. Every list has a deadline (in the source), so a hanging list is a gap like any other.
 *
 * An object that fails validate() is logged once (field at fault) and left out of the store; if it
 * replaces a valid version, handlers see a delete, because keeping the old version would show a state
 * that no longer exists. So is an object or watch event over the size limit of one object
 * (list-watch-oversized.ts): left out, reported, never a failure of the view.
 */
import {sleep, type Cancel, errorMessage} from '../../core/index.ts'
import {translateApiError} from '../http/api-errors.ts'
import {CacheHealth, type HealthListener} from './list-watch-health.ts'
import {resolveOptions, type ListWatchCacheOptions, type ResolvedOptions} from './list-watch-options.ts'
import {ObjectGate} from './list-watch-gate.ts'
import {listAll} from './list-watch-list.ts'
import {OversizedLedger} from './list-watch-oversized.ts'
import {ObjectStore, type CacheEvent, type KubeObject} from './list-watch-store.ts'
import {WatchBackoff} from './watch-backoff.ts'
import type {OversizedEvent} from './watch-request.ts'
import {nextStep, runWatch, type EventOutcome, type WatchEnd} from './watch-stream.ts'

export type {CacheEvent, KubeObject} from './list-watch-store.ts'
export type {CacheObserver, ListWatchCacheOptions, Validation} from './list-watch-options.ts'

/** A stream that lived this long before the server closed it ended routinely, not by a fault. */
export const ROUTINE_STREAM_MS = 10_000
/**
 * The health reason when the cache is whole again after it had to list (its watch could not resume
 * from its resourceVersion): events may have been missed while it was not whole.
 */
export const RELISTED = 'watching after a relist'

export class ListWatchCache<T extends KubeObject> {
  private readonly o: ResolvedOptions<T>
  private readonly store = new ObjectStore<T>()
  private readonly health: CacheHealth
  private readonly backoff: WatchBackoff
  private readonly handlers = new Set<(event: CacheEvent<T>) => void>()
  private readonly gate: ObjectGate<T>
  private readonly oversized: OversizedLedger
  private rv = ''
  private relistDue = false
  private endWatch: (() => void) | undefined
  private cancelRelist: Cancel = () => {}
  /** Armed while a gap between streams lasts; fires when it has lasted too long. */
  private cancelGap: Cancel | undefined
  private gapReason = ''
  private everSynced = false
  private started = false
  /** A list is under way: a relist requested now would repeat it. */
  private listing = false
  /** A list completed since the last watch was established. */
  private relisted = false

  constructor(options: ListWatchCacheOptions<T>) {
    this.o = resolveOptions(options)
    this.gate = new ObjectGate({resource: this.o.resource, logger: this.o.logger, validate: this.o.validate, onInvalid: () => this.o.observer.event('invalid')})
    this.oversized = new OversizedLedger(this.o.resource, this.o.logger, {skipped: (o) => this.o.observer.skipped(o), cleared: (key) => this.o.observer.cleared(key)})
    this.backoff = new WatchBackoff(this.o.clock, this.o.backoff, this.o.random)
    this.health = new CacheHealth((error) => this.o.logger.error({resource: this.o.resource, error: errorMessage(error)}, 'cache health listener failed'))
  }

  get size(): number {
    return this.store.size
  }
  get(key: string): T | undefined {
    return this.store.get(key)
  }
  list(): T[] {
    return this.store.list()
  }
  /** How many objects are left out of the store for their size. */
  get oversizedCount(): number {
    return this.oversized.size
  }
  /** The last resourceVersion seen, from a list, an event or a bookmark. */
  get resourceVersion(): string {
    return this.rv
  }
  isWhole(): boolean {
    return this.health.isWhole()
  }
  /** Whether the cache was ever whole: not whole after that is a gap, before it is not yet synced. */
  get synced(): boolean {
    return this.everSynced
  }
  /** Hears each change of isWhole(), with the reason; returns the unsubscribe function. */
  onHealth(listener: HealthListener): () => void {
    return this.health.subscribe(listener)
  }
  /** Resolves when the cache is whole (at once if it is); rejects when the signal aborts first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    return this.health.waitForWhole(signal)
  }
  /** Handlers run synchronously after the store changed; one that throws is logged and the rest still run. */
  onEvent(handler: (event: CacheEvent<T>) => void): () => void {
    this.handlers.add(handler)
    return () => this.handlers.delete(handler)
  }

  /**
   * Relists soon: at once if a watch is open (it is ended for the relist), else when the loop next
   * comes round. Repeated requests before the relist starts are one.
   */
  requestRelist(reason: string): void {
    if (this.relistDue || this.listing) return
    this.o.logger.info({resource: this.o.resource, reason}, 'relist requested')
    this.relistDue = true
    this.endWatch?.()
  }

  /** Runs until the signal aborts; resolves then, with the watch request ended and every timer cancelled. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error(`list+watch cache for ${this.o.resource} started twice`)
    this.started = true
    try {
      await this.loop(signal)
    } finally {
      this.cancelRelist()
      this.endGap()
      this.health.set(false, 'stopped')
    }
  }

  private async loop(signal: AbortSignal): Promise<void> {
    let listReason: string | undefined = 'initial'
    while (!signal.aborted) {
      if (this.relistDue) listReason ??= 'periodic'
      this.relistDue = false
      if (listReason !== undefined) {
        // A relist is a gap like any other: quick, it is no blindness (a periodic one reconciles a view
        // that was healthy until this moment); slow, it is.
        this.beginGap(`relisting (${listReason})`)
        this.o.observer.relist(listReason)
        try {
          await this.relist(signal)
        } catch (error) {
          if (signal.aborted) return
          const reason = translateApiError(error, {verb: 'list', resource: this.o.resource}).message
          this.beginGap(`list failed (${listReason})`)
          this.o.logger.warn({resource: this.o.resource, error: reason}, 'list failed; retrying after backoff')
          await this.pause(signal)
          continue
        }
        listReason = undefined
        this.armRelist()
      }
      const openedAt = this.o.clock.monotonic()
      const end = await runWatch({
        watch: this.o.watch,
        clock: this.o.clock,
        watchdogMs: this.o.watchdogMs,
        resourceVersion: this.rv,
        signal,
        onEvent: (type, object) => this.apply(type, object),
        onOversized: (event) => this.applyOversized(event),
        onEstablished: () => {
          this.endGap()
          this.everSynced = true
          this.health.set(true, this.relisted ? RELISTED : 'watching')
          this.relisted = false
        },
        onEnd: (end) => {
          // A stream silent past the watchdog has been blind for a long while already: no tolerance.
          if (end.kind !== 'aborted') this.beginGap(nextStep(end).notWhole ?? nextStep(end).message, end.kind === 'silent')
        },
        exposeEnd: (end) => (this.endWatch = end),
      })
      this.endWatch = undefined
      if (end.kind === 'aborted') return
      listReason = this.afterWatch(end)
      // A periodic relist follows at once, and so does the reopening of a stream the server ended
      // cleanly after a while (its watch timeout, routine every minute or so): a backoff there would
      // grow with each routine close and leave the view stale. Everything else waits a backoff, so no
      // failure, nor a server that closes streams at once, can spin.
      const routineClose = end.kind === 'closed' && this.o.clock.monotonic() - openedAt >= ROUTINE_STREAM_MS
      if (end.kind !== 'relist' && !routineClose) await this.pause(signal)
    }
  }

  /** Logs, counts and sets health for a stream's end; returns the reason to relist, if one is needed. */
  private afterWatch(end: Exclude<WatchEnd, {kind: 'aborted'}>): string | undefined {
    const next = nextStep(end)
    if (next.restart === undefined) return next.relist
    this.o.observer.watchRestart(next.restart)
    const error = 'error' in end ? {error: errorMessage(end.error)} : {}
    this.o.logger[next.level]({resource: this.o.resource, resourceVersion: this.rv, ...error}, next.message)
    return next.relist
  }

  /**
   * A relist's gap is judged page by page: each page that arrives restarts the gap's tolerance, so a
   * long list of 20k Leases that keeps answering is no blindness (every page is fresh, and the watch
   * resumes from the list's resourceVersion, so nothing is missed), while a list that stalls is.
   */
  private async relist(signal: AbortSignal): Promise<void> {
    this.listing = true
    let snapshot
    try {
      snapshot = await listAll(this.o.list, this.o.pageSize, this.gate, signal, () => this.gapProgressed())
    } finally {
      this.listing = false
    }
    this.relisted = this.everSynced
    this.gate.retainOnly(snapshot.keys)
    for (const _ of snapshot.oversized) this.o.observer.event('oversized')
    this.oversized.replace(snapshot.oversized)
    this.rv = snapshot.resourceVersion
    this.emit(this.store.replace(snapshot.objects))
  }

  private apply(type: string, raw: unknown): EventOutcome {
    if (type === 'ERROR') {
      const status = (raw ?? {}) as {code?: number; message?: string}
      if (status.code === 410) return 'gone'
      return new Error(`watch ${this.o.resource}: ERROR event ${status.code ?? '?'}: ${status.message ?? 'no message'}`)
    }
    const object = raw as T
    const rv = object?.metadata?.resourceVersion
    if (rv) this.rv = rv
    if (type === 'BOOKMARK') {
      this.o.observer.event('bookmark')
      return 'ok'
    }
    const key = this.gate.key(object)
    if (key === undefined) return 'ok'
    if (type === 'DELETED') {
      this.gate.forget(key)
      this.oversized.clear(key)
      this.emit([this.store.delete(key)])
    } else if (type === 'ADDED' || type === 'MODIFIED') {
      this.oversized.clear(key)
      this.emit([this.gate.admit(key, object) ? this.store.upsert(key, object) : this.store.delete(key)])
    } else {
      this.o.logger.debug({resource: this.o.resource, type}, 'unknown watch event type ignored')
    }
    return 'ok'
  }

  /**
   * An event too large to take: the object is left out (a delete for handlers if it was held, as for an
   * invalid version) and reported. One whose first bytes do not name it cannot be applied to any key:
   * a relist, which passes over the object by its own rules, puts the view right.
   */
  private applyOversized(event: OversizedEvent): EventOutcome {
    this.o.observer.event('oversized')
    const key = OversizedLedger.keyOf(event)
    if (key === undefined || event.type === undefined || !['ADDED', 'MODIFIED', 'DELETED'].includes(event.type)) {
      this.o.logger.warn({resource: this.o.resource, type: event.type, bytes: event.bytes, limitBytes: event.limitBytes}, 'watch event larger than the limit of one object, not named in its first bytes; relisting')
      this.requestRelist('an oversized watch event without a name')
      return 'ok'
    }
    if (event.resourceVersion) this.rv = event.resourceVersion
    this.gate.forget(key)
    if (event.type === 'DELETED') this.oversized.clear(key)
    else this.oversized.skip(key, {name: event.name, namespace: event.namespace, resourceVersion: event.resourceVersion, bytes: event.bytes, limitBytes: event.limitBytes})
    this.emit([this.store.delete(key)])
    return 'ok'
  }

  private emit(events: ReadonlyArray<CacheEvent<T> | undefined>): void {
    for (const event of events) {
      if (event === undefined) continue
      this.o.observer.event(event.type)
      for (const handler of [...this.handlers]) {
        try {
          handler(event)
        } catch (error) {
          this.o.logger.error({resource: this.o.resource, key: event.key, type: event.type, error: errorMessage(error)}, 'cache event handler failed')
        }
      }
    }
  }

  /**
   * A gap between streams begins (or goes on): the view stays whole for gapToleranceMs, then turns
   * not whole until a stream is established again. Before the first sync it is not whole anyway.
   */
  private beginGap(reason: string, immediate = false): void {
    if (!this.health.isWhole()) return
    const tolerance = this.o.gapToleranceMs
    if (tolerance <= 0 || immediate) {
      this.endGap()
      this.health.set(false, reason)
      return
    }
    if (this.cancelGap !== undefined) return
    this.gapReason = reason
    this.cancelGap = this.o.clock.setTimer(tolerance, () => {
      this.cancelGap = undefined
      this.health.set(false, `${reason}, for more than ${tolerance} ms`)
    })
  }

  /** The gap is making progress (a list page arrived): its tolerance starts again. */
  private gapProgressed(): void {
    if (this.cancelGap === undefined || !this.health.isWhole()) return
    const reason = this.gapReason
    this.endGap()
    this.beginGap(reason)
  }

  private endGap(): void {
    this.cancelGap?.()
    this.cancelGap = undefined
  }

  private armRelist(): void {
    this.cancelRelist()
    if (this.o.relistIntervalMs <= 0) return
    this.cancelRelist = this.o.clock.setTimer(this.o.relistIntervalMs, () => {
      this.relistDue = true
      this.endWatch?.()
    })
  }

  /** Waits the next backoff delay; returns early (without throwing) when the signal aborts. */
  private async pause(signal: AbortSignal): Promise<void> {
    await sleep(this.o.clock, this.backoff.next(), signal).catch(() => {})
  }
}
