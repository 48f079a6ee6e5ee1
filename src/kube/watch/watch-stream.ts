/**
 * One watch stream of a list+watch cache, from open to end, reduced to why it ended. The cache decides
 * what to do next from that one value. The watchdog lives here: a stream on which neither an event nor a
 * bookmark arrives for watchdogMs is presumed dead (a half-open TCP connection looks exactly like a quiet
 * resource) and ended.
 */
import type {Clock} from '../../core/index.ts'
import {isGone, type Watcher} from './list-watch-source.ts'
import type {OversizedEvent} from './watch-request.ts'

export type WatchEnd =
  /** The cache is stopping. */
  | {kind: 'aborted'}
  /** 410 Gone: the resourceVersion is too old; only a relist helps. */
  | {kind: 'gone'}
  /** Ended on purpose for the periodic relist. */
  | {kind: 'relist'}
  /** The watchdog fired. */
  | {kind: 'silent'}
  /** The server closed an established stream cleanly (its watch timeout). */
  | {kind: 'closed'}
  /** An established stream failed, or the server sent an ERROR event. */
  | {kind: 'broken'; error: unknown}
  /** The watch could not be opened. */
  | {kind: 'refused'; error: unknown}

/** What the cache does after a stream ended (other than by abort). */
export interface NextStep {
  /** The watchRestart metric's reason; undefined for a planned end. */
  restart?: string
  /** isWhole() turns false with this reason; undefined leaves it as it is. */
  notWhole?: string
  /** Relist before the next watch, for this reason. */
  relist?: string
  level: 'debug' | 'info' | 'warn'
  message: string
}

export function nextStep(end: Exclude<WatchEnd, {kind: 'aborted'}>): NextStep {
  switch (end.kind) {
    case 'relist':
      return {relist: 'periodic', level: 'debug', message: 'periodic relist'}
    case 'gone':
      return {restart: 'gone', notWhole: 'watch expired (410 Gone)', relist: 'gone', level: 'info', message: 'watch expired (410 Gone); relisting'}
    case 'silent':
      return {restart: 'watchdog', notWhole: 'watch silent', level: 'warn', message: 'watch silent past the watchdog; restarting it'}
    case 'closed':
      // The server's watch timeout: reopening from the last resourceVersion replays anything missed.
      return {restart: 'closed', level: 'debug', message: 'watch closed by the server; reopening'}
    case 'broken':
      return {restart: 'error', notWhole: 'watch broken', level: 'warn', message: 'watch broken; reopening after backoff'}
    case 'refused':
      return {restart: 'refused', notWhole: 'watch refused', relist: 'watch refused', level: 'warn', message: 'watch could not be opened; relisting after backoff'}
  }
}

/** What an applied event means for the stream. */
export type EventOutcome = 'ok' | 'gone' | Error

export interface WatchRun {
  watch: Watcher
  clock: Clock
  watchdogMs: number
  resourceVersion: string
  signal: AbortSignal
  /** Applies one event to the store. */
  onEvent(type: string, object: unknown): EventOutcome
  /** Takes note of an event too large to take (it feeds the watchdog like any event). */
  onOversized(event: OversizedEvent): EventOutcome
  onEstablished(): void
  /** Called synchronously the moment the stream ends, before runWatch resolves: health must turn at once. */
  onEnd(end: WatchEnd): void
  /** Receives the means to end this stream for a periodic relist; called once, at open. */
  exposeEnd(end: () => void): void
}

/**
 * Runs one stream until it ends. Resolves only after the watch request itself has settled and been
 * aborted, so that a stopped cache leaves no socket behind.
 */
export async function runWatch(run: WatchRun): Promise<WatchEnd> {
  let settled = false
  let established = false
  let handle: {abort(): void} | undefined
  let cancelWatchdog = () => {}
  let resolveEnd: (end: WatchEnd) => void = () => {}
  const ended = new Promise<WatchEnd>((resolve) => (resolveEnd = resolve))

  const finish = (end: WatchEnd) => {
    if (settled) return
    settled = true
    cancelWatchdog()
    run.signal.removeEventListener('abort', onAbort)
    handle?.abort()
    run.onEnd(end)
    resolveEnd(end)
  }
  const onAbort = () => finish({kind: 'aborted'})
  const feedWatchdog = () => {
    cancelWatchdog()
    cancelWatchdog = run.clock.setTimer(run.watchdogMs, () => finish({kind: 'silent'}))
  }

  if (run.signal.aborted) return {kind: 'aborted'}
  run.signal.addEventListener('abort', onAbort, {once: true})
  run.exposeEnd(() => finish({kind: 'relist'}))
  // Armed before the request is answered too: a connection attempt that hangs is silence as well.
  feedWatchdog()

  const opened = run
    .watch(run.resourceVersion, {
      event(type, object) {
        if (settled) return
        feedWatchdog()
        const outcome = run.onEvent(type, object)
        if (outcome === 'gone') finish({kind: 'gone'})
        else if (outcome instanceof Error) finish({kind: 'broken', error: outcome})
      },
      oversized(event) {
        if (settled) return
        feedWatchdog()
        const outcome = run.onOversized(event)
        if (outcome instanceof Error) finish({kind: 'broken', error: outcome})
      },
      done(error) {
        if (settled) return
        if (isGone(error)) finish({kind: 'gone'})
        else if (!established) finish({kind: 'refused', error: error ?? new Error('watch closed before it was established')})
        else finish(error ? {kind: 'broken', error} : {kind: 'closed'})
      },
    })
    .then(
      (h) => {
        handle = h
        if (settled) {
          h.abort()
          return
        }
        established = true
        run.onEstablished()
      },
      (error: unknown) => finish(isGone(error) ? {kind: 'gone'} : {kind: 'refused', error}),
    )

  const end = await ended
  await opened
  return end
}
