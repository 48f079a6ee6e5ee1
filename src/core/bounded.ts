/**
 * One call bounded on the engine's clock: it gets a signal that aborts at the deadline (or when the
 * caller's signal does), and the caller stops waiting then even if the call ignores its signal. For
 * the controller's API probe and its confirming reads, where a slow answer is itself the news.
 */
import type {Clock} from './clock.ts'

export interface BoundedCall {
  clock: Clock
  timeoutMs: number
  /** The error the call fails with at the deadline. */
  timeoutError: () => Error
  /** Also aborts the call (and the wait), with its own reason. */
  signal?: AbortSignal
}

export function bounded<T>(call: (signal: AbortSignal) => Promise<T>, options: BoundedCall): Promise<T> {
  const {clock, timeoutMs, timeoutError, signal} = options
  const deadline = new AbortController()
  const run = signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, signal])
  return new Promise<T>((resolve, reject) => {
    const fail = (error: unknown) => reject(error instanceof Error ? error : new Error(String(error)))
    const cancel = clock.setTimer(timeoutMs, () => {
      const error = timeoutError()
      deadline.abort(error)
      reject(error)
    })
    let started: Promise<T>
    try {
      started = call(run)
    } catch (error) {
      cancel()
      fail(error)
      return
    }
    started.then(
      (value) => {
        cancel()
        resolve(value)
      },
      (error: unknown) => {
        cancel()
        fail(error)
      },
    )
  })
}
