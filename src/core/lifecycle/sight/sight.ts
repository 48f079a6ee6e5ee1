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
 *
 * Blindness is a judgement about the API as a whole, with hysteresis, as Kubernetes' probes have a
 * failureThreshold: one failed or slow request is not an outage. The evidence is
 * - the probe: blind after {@link PROBE_FAILURE_THRESHOLD} failures in a row (Kubernetes' default
 *   failureThreshold), counted from the last good answer before them, so that the time it took to be
 *   sure is blind time too; one good probe ends it (successThreshold 1);
 * - the controller's other requests (confirming reads, writes) failing together: blind when, within
 *   the last {@link requestWindowMs}, at least {@link REQUEST_FAILURES_MIN} failed and they were at
 *   least half of all answered. Independent losses (a lossy link spoiling f = 5 % of requests) make
 *   five failures at a 50 % share in one window rare: binomially at most about 6e-5 a window (at 10
 *   requests in it; 1e-8 at 20); an outage fails nearly every request at once. Cleared like a
 *   pause: by a probe started after it answering.
 * A pause of this process stays immediate blindness: it is certain, not a sample.
 *
 * Reads are not enough: with etcd refusing writes (NOSPACE) every read answers while no poollet can
 * renew, and their silence is no evidence. With a write probe (the controller renewing a Lease of its
 * own at the poollets' cadence and request deadline), {@link WRITE_FAILURE_THRESHOLD} failed writes in
 * a row are blindness from the last write that landed (one is a lossy link's sample, not an outage;
 * backdating makes the second probe's delay cost nothing); and once writes land again, the sight
 * stays blind for a settle window of one write interval plus one deadline, the time in which every
 * live poollet has had a tick and its request's deadline to renew. Only then does silence count again.
 *
 * A stall of the API (SIGSTOP, a wedged etcd) shorter than the probes' threshold still fails every
 * poollet request in flight once it outlasts their deadline. So no answer at all for one poollet
 * request deadline (the write probe's), while requests were out, is blindness too, at once and
 * backdated to the last answer; it ends with the next answer. No settle window follows a stall: the
 * poollets' requests that failed in it are retried at once within their Lease's budget (and a tick
 * whose renewal got no answer skips its Ready write, so that it keeps its slot), so they land as the
 * stall ends; a settle window there only kept dead pools unmarked under a flapping API (1.5 s of
 * every 4 s: marked after the flapping, against 3 × grace + 2 s while it lasts). Refused writes do
 * get one: those fail fast, every retry with them, until the budget is spent. A lossy link does not
 * look like a stall: the other requests, sent every probe interval, keep answering.
 */
import {bounded} from '../../bounded.ts'
import {sleep, type Clock} from '../../clock.ts'
import {errorMessage, isAnswer} from '../../errors.ts'
import type {Logger} from '../../ports.ts'

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
  /**
   * A write of the controller's own that proves writes land (writeProbe() in write-probe.ts); rejects
   * on failure. An answered refusal (403, 404, 409) proves the API answers, not that it stores: it
   * counts as landed, and is logged once. Absent: writes are taken on trust.
   */
  writeProbe?: (signal: AbortSignal) => Promise<void>
  /** Between write probes: the poollets' heartbeat interval. Default 10 s. */
  writeProbeIntervalMs?: number
  /** The write probe's deadline: the poollets' request deadline. Default 10 s. */
  writeProbeTimeoutMs?: number
}

/** The poollets' defaults (poollet-options.ts): heartbeat 10 s, requests bounded by min(interval, Lease duration). */
export const WRITE_PROBE_DEFAULTS = {intervalMs: 10_000, timeoutMs: 10_000} as const
/** Write probes that fail in a row before the sight is blind. */
export const WRITE_FAILURE_THRESHOLD = 2

export interface SightState {
  reason: 'paused' | 'api-unanswered' | undefined
  detail?: string
  /**
   * How long the sight has been blind already when it says so: for a pause, how long the process was
   * stopped; for failed probes, since the first of the run started.
   */
  blindForMs?: number
}

/** Probes that fail in a row before the sight is blind: Kubernetes' default failureThreshold. */
export const PROBE_FAILURE_THRESHOLD = 3
/** Failed requests within the window that can make the sight blind, at least. */
export const REQUEST_FAILURES_MIN = 5

type Listener = (state: SightState) => void

/** A request of the sight's own given up at its deadline: silence, unlike an error answered. */
class NoAnswerError extends Error {
  override readonly name = 'NoAnswerError'
}

/** Derives the sight's timings from the grace period: probes well inside it, lag far below it. */
export function sightTimings(gracePeriodMs: number): Pick<SightOptions, 'probeIntervalMs' | 'probeTimeoutMs' | 'tickMs' | 'maxLagMs' | 'writeProbeIntervalMs' | 'writeProbeTimeoutMs'> {
  const clamp = (v: number, lo: number, hi: number) => Math.min(Math.max(v, lo), hi)
  return {
    // 10 probes per grace period, at most one every 5 s: 50 s grace → one cheap GET every 5 s.
    probeIntervalMs: clamp(gracePeriodMs / 10, 200, 5_000),
    probeTimeoutMs: clamp(gracePeriodMs / 4, 1_000, 5_000),
    tickMs: clamp(gracePeriodMs / 20, 100, 1_000),
    // Generous for a busy machine (GC pauses, a loaded core), still well below any grace period.
    maxLagMs: clamp(gracePeriodMs / 4, 1_000, 5_000),
    // The poollets' cadence and deadline as their defaults relate to the grace (10 s of 50 s). The
    // deadline is 5 s at least: at a short grace (the tests' 8 s) a 1.6 s deadline for a GET and a
    // PUT was missed twice in a row under a mass death's hundred requests in flight, and the sight
    // took a loaded API for one that refuses writes.
    writeProbeIntervalMs: clamp(gracePeriodMs / 5, 200, WRITE_PROBE_DEFAULTS.intervalMs),
    writeProbeTimeoutMs: clamp(gracePeriodMs / 5, 5_000, WRITE_PROBE_DEFAULTS.timeoutMs),
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
  /** Why the API is taken for unanswered (probes failed in a row, requests failing together); undefined after a success. */
  private apiProblem: string | undefined = 'not yet probed'
  private apiProblemSinceMs = 0
  private lastGoodProbeStart: number | undefined
  /** When the last good probe answered: the API may have failed any time after it. */
  private lastGoodProbeEnd: number | undefined
  /** When another request last answered (reportRequest(true)). */
  private lastGoodRequestEnd: number | undefined
  /** The run of failed probes: how many, and when the first of them started. */
  private probeFailures = 0
  private firstFailedProbeStart = 0
  /** When the requests' failures made the sight blind; cleared by a probe started after it. */
  private requestsFailedAt: number | undefined
  /** Recent answers to other requests (time, ok), oldest first, within requestWindowMs. */
  private readonly answers: {at: number; ok: boolean}[] = []
  private reported: SightState = {reason: 'api-unanswered', detail: 'not yet probed'}
  /** Why writes are taken for failing, and since when (the last write that landed). */
  private writeProblem: string | undefined
  private writeProblemSince = 0
  private lastGoodWriteEnd: number | undefined
  /** After writes failed: blind until then, so every live poollet has had its chance to renew. */
  private settleUntil: number | undefined
  private refusalLogged = false
  private writeFailures = 0
  /** When anything last answered (a probe, the write probe, another request), and when a probe last went out. */
  private lastAnswerAt: number | undefined
  private lastSentAt = 0
  /** Since when nothing has answered, once that outlasted a request deadline. */
  private stallSince: number | undefined

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

  /**
   * Another request answered (ok) or failed or was too slow (a confirming read, a write). One failure
   * is that request's trouble; many failing together are the API's.
   */
  reportRequest(ok: boolean, detail?: string): void {
    const now = this.o.clock.monotonic()
    const horizon = now - this.requestWindowMs()
    while (this.answers.length > 0 && this.answers[0]!.at < horizon) this.answers.shift()
    this.answers.push({at: now, ok})
    if (ok) {
      this.lastGoodRequestEnd = now
      this.heard()
    }
    if (ok || this.requestsFailedAt !== undefined) return
    let failed = 0
    for (const answer of this.answers) if (!answer.ok) failed++
    if (failed < REQUEST_FAILURES_MIN || failed * 2 < this.answers.length) return
    // Blind since the last answer of any kind before these failures, as for the probes: a failure is
    // reported only once its request gave up (its deadline), so the outage began well before the
    // first failure was heard, and the silence of that time is no pool's.
    const lastAnswer = Math.max(this.lastGoodProbeEnd ?? -Infinity, this.lastGoodRequestEnd ?? -Infinity)
    const since = Number.isFinite(lastAnswer) ? lastAnswer : (this.answers.find((a) => !a.ok)?.at ?? now)
    this.requestsFailedAt = now
    this.apiProblem = `${failed} of ${this.answers.length} requests failed within ${this.requestWindowMs()} ms${detail === undefined ? '' : `, the last: ${detail}`}`
    this.apiProblemSinceMs = now - since
    this.answers.length = 0
    this.update()
  }

  /** The window in which requests failing together are the API's trouble: two probe intervals. */
  private requestWindowMs(): number {
    return 2 * this.o.probeIntervalMs
  }

  /** Ticks and probes until signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    this.lastTick = this.o.clock.monotonic()
    const ticking = this.tick(signal)
    const probing = this.probeLoop(signal)
    const writing = this.writeProbeLoop(signal)
    await Promise.all([ticking, probing, writing])
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
    this.lastSentAt = started
    try {
      await bounded(this.o.probe, {clock, timeoutMs: probeTimeoutMs, signal, timeoutError: () => new NoAnswerError(`no answer within ${probeTimeoutMs} ms`)})
    } catch (error) {
      if (signal.aborted) return
      // An error answered quickly (503, refused) is no stall: the probes' threshold judges it.
      if (!(error instanceof NoAnswerError)) this.heard()
      if (this.probeFailures++ === 0) this.firstFailedProbeStart = started
      // Never answered yet: blind anyway; say why.
      if (this.lastGoodProbeStart === undefined) this.apiProblem = errorMessage(error)
      if (this.probeFailures >= PROBE_FAILURE_THRESHOLD && this.requestsFailedAt === undefined) {
        this.apiProblem = `${errorMessage(error)} (${this.probeFailures} probes failed in a row)`
        // Blind since the last answer, before the first failure: the outage may have begun right after it.
        this.apiProblemSinceMs = clock.monotonic() - (this.lastGoodProbeEnd ?? this.firstFailedProbeStart)
      }
      this.update()
      return
    }
    this.lastGoodProbeStart = started
    this.lastGoodProbeEnd = clock.monotonic()
    this.heard()
    this.probeFailures = 0
    // The requests' failures are over once a probe sent after them answered, as a pause is.
    if (this.requestsFailedAt === undefined || started >= this.requestsFailedAt) {
      this.requestsFailedAt = undefined
      this.apiProblem = undefined
    }
    if (this.pausedAt !== undefined && started >= this.pausedAt) this.pausedAt = undefined
    this.update()
  }

  private async writeProbeLoop(signal: AbortSignal): Promise<void> {
    const probe = this.o.writeProbe
    if (probe === undefined) return
    const intervalMs = this.o.writeProbeIntervalMs ?? WRITE_PROBE_DEFAULTS.intervalMs
    const timeoutMs = this.o.writeProbeTimeoutMs ?? WRITE_PROBE_DEFAULTS.timeoutMs
    const {clock} = this.o
    while (!signal.aborted) {
      const started = clock.monotonic()
      this.lastSentAt = started
      try {
        await bounded(probe, {clock, timeoutMs, signal, timeoutError: () => new NoAnswerError(`no answer within ${timeoutMs} ms`)})
        this.writeLanded(intervalMs + timeoutMs)
      } catch (error) {
        if (signal.aborted) return
        if (!(error instanceof NoAnswerError)) this.heard()
        if (isAnswer(error)) {
          if (!this.refusalLogged) this.o.logger.warn({err: errorMessage(error)}, 'the write probe is refused: writes are taken on trust (see the RBAC of the leader-election namespace)')
          this.refusalLogged = true
          this.writeLanded(0)
        } else if (++this.writeFailures >= WRITE_FAILURE_THRESHOLD && this.writeProblem === undefined) {
          this.writeProblem = `writes fail: ${errorMessage(error)}`
          this.writeProblemSince = this.lastGoodWriteEnd ?? started
          this.settleUntil = undefined
          this.update()
        }
      }
      try {
        await sleep(clock, Math.max(0, started + intervalMs - clock.monotonic()), signal)
      } catch {
        return
      }
    }
  }

  /** A write landed; after a spell of failed writes, blind for settleMs more. */
  private writeLanded(settleMs: number): void {
    const now = this.o.clock.monotonic()
    this.heard()
    this.lastGoodWriteEnd = now
    this.writeFailures = 0
    if (this.writeProblem === undefined) return
    this.writeProblem = undefined
    if (settleMs > 0) this.settle(settleMs)
    this.update()
  }

  /** Blind for settleMs more: every live poollet gets a tick and a request deadline to renew first. */
  private settle(settleMs: number): void {
    const until = this.o.clock.monotonic() + settleMs
    if (until <= (this.settleUntil ?? -Infinity)) return
    this.settleUntil = until
    this.o.clock.setTimer(settleMs, () => {
      if (this.settleUntil === until) this.settleUntil = undefined
      this.update()
    })
  }

  /** The poollets' request deadline as the sight assumes it: the write probe's. */
  private requestDeadlineMs(): number {
    return this.o.writeProbeTimeoutMs ?? WRITE_PROBE_DEFAULTS.timeoutMs
  }

  /** The API responded (an answer, or an error it sent): a stall, if one was seen, is over. */
  private heard(): void {
    this.lastAnswerAt = this.o.clock.monotonic()
    if (this.stallSince === undefined) return
    this.stallSince = undefined
    this.update()
  }

  /** No answer for a request deadline while probes went out: the API stalled. */
  private checkStall(now: number): void {
    if (this.stallSince !== undefined || this.lastAnswerAt === undefined) return
    if (this.lastSentAt > this.lastAnswerAt && now - this.lastAnswerAt >= this.requestDeadlineMs()) this.stallSince = this.lastAnswerAt
  }

  /** The state the evidence shows now; listeners hear a change. */
  private update(): void {
    const now = this.o.clock.monotonic()
    this.checkStall(now)
    let next: SightState
    if (this.pausedAt !== undefined) {
      next = {reason: 'paused', detail: `the event loop ran ${this.pauseGapMs} ms late (paused or starved)`, blindForMs: this.pauseGapMs}
    } else if (this.apiProblem !== undefined) {
      next = {reason: 'api-unanswered', detail: this.apiProblem, blindForMs: this.apiProblemSinceMs}
    } else if (this.stallSince !== undefined) {
      next = {reason: 'api-unanswered', detail: `no answer from the API for ${Math.round(now - this.stallSince)} ms (a poollet's request deadline is ${this.requestDeadlineMs()} ms)`, blindForMs: now - this.stallSince}
    } else if (this.writeProblem !== undefined) {
      next = {reason: 'api-unanswered', detail: this.writeProblem, blindForMs: now - this.writeProblemSince}
    } else if (this.settleUntil !== undefined && now < this.settleUntil) {
      next = {reason: 'api-unanswered', detail: `writes land again; settling for ${Math.round(this.settleUntil - now)} ms so that every live poollet can renew first`}
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

  /**
   * A good probe older than this is no evidence: the probes after it should have answered or failed
   * their threshold by now (a backstop should the probe loop itself be stuck).
   */
  private staleAfterMs(): number {
    return PROBE_FAILURE_THRESHOLD * (this.o.probeIntervalMs + this.o.probeTimeoutMs) + this.o.maxLagMs
  }
}
