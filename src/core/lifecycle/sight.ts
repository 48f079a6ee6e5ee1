/**
 * The controller's evidence that it can see, apart from its watches: its own event loop runs on time,
 * and the API server answers a cheap, bounded request that goes through its storage (a quorum read)
 * promptly. Either failing is blindness: a controller that was paused, starved, or cut off from a
 * working API server has no evidence that silent pools are dead, so it must not judge them.
 *
 * Both are checked two ways. Timers report what they see (a tick that fires far too late, a probe
 * that fails or is slow), and check() asks synchronously whether the evidence is still fresh, so a
 * deadline that fires the instant a paused process resumes, before the tick timer had its turn,
 * still finds the process blind. A pause ends only with a probe started after it succeeded: by then
 * every watch event that waited in the sockets while the process was stopped has been read.
 */
import {bounded} from '../bounded.ts'
import {sleep, type Clock} from '../clock.ts'
import {errorMessage} from '../errors.ts'
import type {Logger} from '../ports.ts'

/** Why the view is not whole, from the most to the least telling. */
export const BLIND_REASONS = ['paused', 'api-unanswered', 'watch-gap', 'not-synced'] as const
export type BlindReason = (typeof BLIND_REASONS)[number]

export interface SightOptions {
  clock: Clock
  logger: Logger
  /** The cheap request that proves the API server and its storage answer; rejects on failure. */
  probe: (signal: AbortSignal) => Promise<void>
  /** Time between probes. */
  probeIntervalMs: number
  /** A probe slower than this failed: the request is aborted and the view is blind. */
  probeTimeoutMs: number
  /** The loop ticks this often to measure how late its timers fire. */
  tickMs: number
  /** A tick later than this past its due time means the process was paused or starved. */
  maxLagMs: number
}

export interface SightState {
  reason: 'paused' | 'api-unanswered' | undefined
  detail?: string
  /** For a pause: how long the process was stopped before it could see so, i.e. blind already. */
  blindForMs?: number
}

type Listener = (state: SightState) => void

/** Derives the sight's timings from the grace period: probes well inside it, lag far below it. */
export function sightTimings(gracePeriodMs: number): Pick<SightOptions, 'probeIntervalMs' | 'probeTimeoutMs' | 'tickMs' | 'maxLagMs'> {
  const clamp = (v: number, lo: number, hi: number) => Math.min(Math.max(v, lo), hi)
  return {
    // 10 probes per grace period, at most one every 5 s: 50 s grace → one cheap GET every 5 s.
    probeIntervalMs: clamp(gracePeriodMs / 10, 200, 5_000),
    probeTimeoutMs: clamp(gracePeriodMs / 4, 1_000, 5_000),
    tickMs: clamp(gracePeriodMs / 20, 100, 1_000),
    // Generous for a busy machine (GC pauses, a loaded core), still well below any grace period.
    maxLagMs: clamp(gracePeriodMs / 4, 1_000, 5_000),
  }
}

export class Sight {
  private readonly o: SightOptions
  private readonly listeners = new Set<Listener>()
  private lastTick: number
  private expectedTick: number | undefined
  /** When a pause was detected; cleared by a successful probe started at or after it. */
  private pausedAt: number | undefined
  private pauseGapMs = 0
  /** Why the last probe failed; undefined after a success. */
  private apiProblem: string | undefined = 'not yet probed'
  private lastGoodProbeStart: number | undefined
  private reported: SightState = {reason: 'api-unanswered', detail: 'not yet probed'}

  constructor(options: SightOptions) {
    this.o = options
    this.lastTick = options.clock.monotonic()
  }

  get state(): SightState {
    return this.reported
  }

  /** Hears each change of state; returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Whether the evidence is fresh now; reports a change of state before it returns. */
  check(): boolean {
    const now = this.o.clock.monotonic()
    if (now - this.lastTick > this.o.tickMs + this.o.maxLagMs) this.paused(now, now - this.lastTick - this.o.tickMs)
    this.update()
    return this.reported.reason === undefined
  }

  /** Another request failed or was too slow (e.g. a confirming read): the API is not answering. */
  reportApiFailure(detail: string): void {
    this.apiProblem = detail
    this.update()
  }

  /** Ticks and probes until signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    this.lastTick = this.o.clock.monotonic()
    const ticking = this.tick(signal)
    const probing = this.probeLoop(signal)
    await Promise.all([ticking, probing])
  }

  private async tick(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      this.expectedTick = this.o.clock.monotonic() + this.o.tickMs
      try {
        await sleep(this.o.clock, this.o.tickMs, signal)
      } catch {
        return
      }
      const now = this.o.clock.monotonic()
      const lag = now - (this.expectedTick ?? now)
      if (lag > this.o.maxLagMs) this.paused(now, lag)
      this.lastTick = now
      this.update()
    }
  }

  /** A pause seen now; a later one moves the mark, so only a probe started after the last pause ends it. */
  private paused(now: number, gapMs: number): void {
    this.pausedAt = now
    this.pauseGapMs = Math.round(gapMs)
    this.lastTick = now
  }

  private async probeLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.probeOnce(signal)
      try {
        await sleep(this.o.clock, this.o.probeIntervalMs, signal)
      } catch {
        return
      }
    }
  }

  private async probeOnce(signal: AbortSignal): Promise<void> {
    const {clock, probeTimeoutMs} = this.o
    const started = clock.monotonic()
    try {
      await bounded(this.o.probe, {clock, timeoutMs: probeTimeoutMs, signal, timeoutError: () => new Error(`no answer within ${probeTimeoutMs} ms`)})
    } catch (error) {
      if (signal.aborted) return
      this.apiProblem = errorMessage(error)
      this.update()
      return
    }
    this.lastGoodProbeStart = started
    this.apiProblem = undefined
    if (this.pausedAt !== undefined && started >= this.pausedAt) this.pausedAt = undefined
    this.update()
  }

  /** The state the evidence shows now; listeners hear a change. */
  private update(): void {
    const now = this.o.clock.monotonic()
    let next: SightState
    if (this.pausedAt !== undefined) {
      next = {reason: 'paused', detail: `the event loop ran ${this.pauseGapMs} ms late (paused or starved)`, blindForMs: this.pauseGapMs}
    } else if (this.apiProblem !== undefined) {
      next = {reason: 'api-unanswered', detail: this.apiProblem}
    } else if (this.lastGoodProbeStart === undefined || now - this.lastGoodProbeStart > this.staleAfterMs()) {
      next = {reason: 'api-unanswered', detail: 'no recent answer from the API server'}
    } else {
      next = {reason: undefined}
    }
    if (next.reason === this.reported.reason) return
    this.reported = next
    for (const listener of [...this.listeners]) {
      try {
        listener(next)
      } catch (error) {
        this.o.logger.error({err: errorMessage(error)}, 'sight listener failed')
      }
    }
  }

  /** A good probe older than this is no evidence: the next one should have answered by now. */
  private staleAfterMs(): number {
    return this.o.probeIntervalMs + this.o.probeTimeoutMs + this.o.maxLagMs
  }
}
