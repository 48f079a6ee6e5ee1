/**
 * "Whole / not whole" for one cache: whether its store may be trusted to hold every object the API has,
 * give or take the latency of an open watch. The blindness guard and /readyz read it; listeners hear each
 * change once, with the reason, so a consumer can tell an outage from a planned relist.
 */
export type HealthListener = (whole: boolean, reason: string) => void

export class CacheHealth {
  private whole = false
  private readonly listeners = new Set<HealthListener>()
  private readonly waiters = new Set<() => void>()

  private readonly onListenerError: (error: unknown) => void

  constructor(onListenerError: (error: unknown) => void) {
    this.onListenerError = onListenerError
  }

  isWhole(): boolean {
    return this.whole
  }

  /** Sets the state; listeners are told only of a change. */
  set(whole: boolean, reason: string): void {
    if (whole === this.whole) return
    this.whole = whole
    for (const listener of [...this.listeners]) {
      try {
        listener(whole, reason)
      } catch (error) {
        this.onListenerError(error)
      }
    }
    if (whole) {
      for (const wake of [...this.waiters]) wake()
    }
  }

  /** Subscribes; the returned function unsubscribes. */
  subscribe(listener: HealthListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Resolves as soon as the cache is whole (at once if it is); rejects with the signal's reason on abort. */
  waitForWhole(signal?: AbortSignal): Promise<void> {
    if (this.whole) return Promise.resolve()
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason as Error)
        return
      }
      const onAbort = () => {
        this.waiters.delete(wake)
        reject(signal?.reason as Error)
      }
      const wake = () => {
        this.waiters.delete(wake)
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }
      this.waiters.add(wake)
      signal?.addEventListener('abort', onAbort, {once: true})
    })
  }
}
