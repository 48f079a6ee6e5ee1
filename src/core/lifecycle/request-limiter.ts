/**
 * The controller's own load on the API, bounded as client-go bounds a client (`--qps`, `--burst`),
 * plus a cap on requests in flight: a mass death of pools turns into a steady queue of confirming
 * reads and writes, never a burst that the API server's priority and fairness answers with 429s
 * (which would look like an outage and blind the controller). Shared by every kind of one process:
 * it is one client, one APF flow.
 *
 * Two lanes: writes of pools already confirmed silent go before new confirming reads, so that a
 * confirmation is acted on while it is fresh. A call's own deadline starts when it leaves the queue.
 */
import type {Cancel, Clock} from '../clock.ts'
import {TokenBucket} from '../token-bucket.ts'

export interface RequestLimits {
  /** Requests per second, sustained (client-go's QPS). */
  qps: number
  /** Requests allowed at once above the rate (client-go's burst). */
  burst: number
  /** Requests in flight at most. */
  concurrency: number
}

/**
 * 100 requests a second, a burst of 200, 100 in flight. The rate is twice kube-scheduler's client
 * default (50/100), because marking is this controller's whole job: a mass death of 1000 pools (2000
 * requests, a confirming read and a write each) is worked off in about 18 s. The cap in flight keeps
 * a burst from overflowing APF's queues (a burst of hundreds at once drew 429s; a hung API holds no
 * more than the cap), and is set so that the rate, not the cap, paces the queue up to answers of 1 s:
 * at 16 in flight, every answer slower than 160 ms made the cap the pace, and 1000 dead pools at 1 s
 * were marked 165 s after their death (grace 50 s); at 100, 60 s (the simulator's
 * bench:slow-answers). Tests: live-verdicts.test.ts.
 */
export const DEFAULT_REQUEST_LIMITS: RequestLimits = {qps: 100, burst: 200, concurrency: 100}

/**
 * The limits for `--qps` and `--burst`. The cap in flight follows the rate (one second of requests,
 * never below the default's 100), so that the rate, not the cap, still paces answers of up to 1 s.
 * A region whose mass deaths outrun the default (at 100,000 pools, 1 % dying within a heartbeat of
 * 10 s is 100 deadlines a second, two requests each) raises the rate: bench/README.md, bench:scale.
 */
export function requestLimits(qps: number, burst: number): RequestLimits {
  return {qps, burst, concurrency: Math.max(DEFAULT_REQUEST_LIMITS.concurrency, Math.ceil(qps))}
}

interface Waiting {
  start: () => void
  fail: (error: Error) => void
  signal?: AbortSignal
  onAbort?: () => void
}

export class RequestLimiter {
  private readonly bucket: TokenBucket
  private readonly clock: Clock
  private readonly limits: RequestLimits
  private readonly lanes: [Waiting[], Waiting[]] = [[], []]
  private running = 0

  constructor(clock: Clock, limits: RequestLimits = DEFAULT_REQUEST_LIMITS) {
    this.clock = clock
    this.limits = limits
    this.bucket = new TokenBucket(limits.qps, limits.burst, clock)
  }

  /** Requests waiting for a slot or a token, and requests in flight (for tests and benches). */
  get queued(): number {
    return this.lanes[0].length + this.lanes[1].length
  }
  get inFlight(): number {
    return this.running
  }

  /**
   * Runs call when a slot and a token are free; urgent calls go first. Rejects with the signal's
   * reason when it aborts before the call started (the call is then never made).
   */
  run<T>(call: () => Promise<T>, options: {urgent?: boolean; signal?: AbortSignal} = {}): Promise<T> {
    const {signal} = options
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason as Error)
        return
      }
      const waiting: Waiting = {
        signal,
        fail: reject,
        start: () => {
          let started: Promise<T>
          try {
            started = call()
          } catch (error) {
            started = Promise.reject(error instanceof Error ? error : new Error(String(error)))
          }
          started.then(resolve, reject).finally(() => {
            this.running--
            this.pump()
          })
        },
      }
      if (signal !== undefined) {
        waiting.onAbort = () => {
          const lane = this.lanes[options.urgent ? 0 : 1]
          const at = lane.indexOf(waiting)
          if (at >= 0) lane.splice(at, 1)
          reject(signal.reason as Error)
        }
        signal.addEventListener('abort', waiting.onAbort, {once: true})
      }
      this.lanes[options.urgent ? 0 : 1].push(waiting)
      this.pump()
    })
  }

  private pump(): void {
    while (this.running < this.limits.concurrency) {
      const next = this.lanes[0].shift() ?? this.lanes[1].shift()
      if (next === undefined) return
      this.running++
      const wait = this.bucket.reserve()
      const go = () => {
        if (next.onAbort !== undefined) next.signal?.removeEventListener('abort', next.onAbort)
        if (next.signal?.aborted) {
          this.running--
          next.fail(next.signal.reason as Error)
          this.pump()
          return
        }
        next.start()
      }
      if (wait <= 0) go()
      else {
        const timer: {cancel: Cancel} = {cancel: () => {}}
        const onAbort = () => {
          timer.cancel()
          this.running--
          next.fail(next.signal?.reason as Error)
          this.pump()
        }
        // Aborted while waiting for its token: the slot is freed at once (the token is spent).
        next.signal?.addEventListener('abort', onAbort, {once: true})
        timer.cancel = this.clock.setTimer(wait, () => {
          next.signal?.removeEventListener('abort', onAbort)
          go()
        })
      }
    }
  }
}
