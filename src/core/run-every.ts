/**
 * Runs a step at once, then again every interval plus a little jitter, until aborted: Kubernetes'
 * wait.JitterUntil on the Clock port. Sliding (the default, sliding=true): the wait starts when a
 * step ends, so a slow step delays the next one. Fixed (sliding: false): the next step is due an
 * interval after the last one started, and a step that overran its slot is followed at the next slot
 * of the same phase, not a full interval after it ended. Steps never overlap. The jitter spreads a thousand poollets started
 * together so that they do not hit the API server in the same instant.
 */
import {sleep, type Clock} from './clock.ts'

/** Kubernetes' lease controller and kubelet use 4 %: at most 0.4 s on a 10 s interval. */
export const DEFAULT_JITTER_FACTOR = 0.04

export interface RunEveryOptions {
  clock: Clock
  /** Time from the end of one step to the start of the next, before jitter. */
  intervalMs: number
  /** Stops the loop; the step in flight is given the same signal and finishes. */
  signal: AbortSignal
  /** Called with whatever a step throws; the loop goes on. Not called for errors once aborted. */
  onError: (error: unknown) => void
  /** Each wait is intervalMs * (1 + random() * jitterFactor). Default {@link DEFAULT_JITTER_FACTOR}. */
  jitterFactor?: number
  /** A number in [0, 1). Default Math.random; a test seam. */
  random?: () => number
  /** Whether the interval is measured from a step's end (default) or from its start. */
  sliding?: boolean
}

/** The wait before the next step: in [intervalMs, intervalMs * (1 + jitterFactor)). */
export function jittered(intervalMs: number, jitterFactor: number, random: () => number): number {
  return intervalMs + random() * jitterFactor * intervalMs
}

/** Resolves when aborted and the step in flight (if any) has finished; never rejects. */
export async function runEvery(step: (signal: AbortSignal) => Promise<void>, options: RunEveryOptions): Promise<void> {
  const {clock, intervalMs, signal, onError} = options
  const jitterFactor = options.jitterFactor ?? DEFAULT_JITTER_FACTOR
  const random = options.random ?? Math.random
  const sliding = options.sliding ?? true
  while (!signal.aborted) {
    const started = clock.monotonic()
    try {
      await step(signal)
    } catch (error) {
      // An error caused by shutdown is not a failure worth reporting.
      if (!signal.aborted) report(onError, error)
    }
    if (signal.aborted) break
    try {
      await sleep(clock, sliding ? jittered(intervalMs, jitterFactor, random) : nextSlotWait(started, clock.monotonic(), jittered(intervalMs, jitterFactor, random), intervalMs), signal)
    } catch {
      // sleep() rejects only on abort, and it has cancelled its timer already.
      break
    }
  }
}

/**
 * For a fixed cadence: the wait from now until the first slot after now, slots every intervalMs from
 * the step's start plus its jittered first wait. A step that took longer than its slot keeps its phase.
 */
export function nextSlotWait(startedAt: number, now: number, firstWaitMs: number, intervalMs: number): number {
  let due = startedAt + firstWaitMs
  if (due <= now) due += Math.ceil((now - due) / intervalMs) * intervalMs
  return Math.max(0, due - now)
}

/** An onError that throws must not end the loop it reports for. */
function report(onError: (error: unknown) => void, error: unknown): void {
  try {
    onError(error)
  } catch {
    // Nothing sensible is left to tell; the next step runs as planned.
  }
}
