/**
 * The one source of time for the engine: reading it and waiting on it. Production code uses
 * {@link systemClock}; tests use the fake clock in test/support so that time moves only when told.
 *
 * Two readings, never mixed: monotonic() for every elapsed-time judgement (grace periods, deadlines,
 * retries, leader election, loop lag), which no NTP step or VM resume can move; wall() only for
 * timestamps written to the API or shown to a person.
 */
export interface Clock {
  /** Milliseconds on a monotonic clock with an arbitrary origin: only differences mean anything. */
  monotonic(): number
  /** Milliseconds since the epoch: only for timestamps written to the API or displayed. */
  wall(): number
  /** Calls fn once after ms (monotonic); the returned function cancels it. */
  setTimer(ms: number, fn: () => void): Cancel
}

export type Cancel = () => void

/**
 * Resolves after ms on the given clock, or rejects with the signal's reason when aborted first.
 * Every wait in src/core goes through this, so shutdown never waits out a timer.
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error)
      return
    }
    const onAbort = () => {
      cancel()
      reject(signal?.reason as Error)
    }
    const cancel = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    })
    signal?.addEventListener('abort', onAbort, {once: true})
  })
}

/** Real time. The single place in src/core allowed to touch the global timers. */
export const systemClock: Clock = {
  // performance.now() is monotonic (CLOCK_MONOTONIC under libuv); Node's timers run on the same clock.
  // eslint-disable-next-line no-restricted-properties -- the system clock is the real time source
  monotonic: () => performance.now(),
  // eslint-disable-next-line no-restricted-properties -- the system clock is the real time source
  wall: () => Date.now(),
  setTimer(ms, fn) {
    // eslint-disable-next-line no-restricted-globals -- the system clock is the real timer source
    const handle = setTimeout(fn, ms)
    return () => clearTimeout(handle)
  },
}
