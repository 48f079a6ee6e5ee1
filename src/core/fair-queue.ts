/**
 * A work queue fair across keys, after client-go's workqueue (an item queued twice runs once; one that
 * changes while it runs runs again after) with a queue per key served round-robin: at most `perKey`
 * items of one key run at once, at most `concurrency` in all. A key that queues a thousand items delays
 * another key's item by at most one item per worker, not by its thousand.
 */
export interface FairQueueOptions {
  concurrency: number
  perKey: number
  run(item: string): Promise<void>
  /** Called with an error run() threw; the item is not retried (a later add() runs it again). */
  onError(item: string, error: unknown): void
}

export class FairQueue {
  private readonly o: FairQueueOptions
  /** Per key, its items waiting, in order. */
  private readonly waiting = new Map<string, string[]>()
  /** Keys with items waiting, in the order they are served. */
  private readonly turns: string[] = []
  /** Items waiting (by item), with their key. */
  private readonly queued = new Map<string, string>()
  /** Items running, and those added again while running (to run once more after). */
  private readonly running = new Set<string>()
  private readonly dirty = new Map<string, string>()
  private readonly inFlight = new Map<string, number>()
  private total = 0
  private idleWaiters: Array<() => void> = []

  constructor(o: FairQueueOptions) {
    if (o.concurrency < 1 || o.perKey < 1) throw new Error('FairQueue needs concurrency and perKey of at least 1')
    this.o = o
  }

  add(key: string, item: string): void {
    if (this.queued.has(item)) return
    if (this.running.has(item)) {
      this.dirty.set(item, key)
      return
    }
    this.queued.set(item, key)
    const items = this.waiting.get(key)
    if (items === undefined) {
      this.waiting.set(key, [item])
      this.turns.push(key)
    } else {
      items.push(item)
    }
    this.pump()
  }

  /** Items waiting or running. */
  get size(): number {
    return this.queued.size + this.running.size
  }

  /** Resolves once nothing waits or runs. */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  private pump(): void {
    while (this.total < this.o.concurrency) {
      const index = this.turns.findIndex((key) => (this.inFlight.get(key) ?? 0) < this.o.perKey)
      if (index < 0) return
      const key = this.turns[index] as string
      const items = this.waiting.get(key) as string[]
      const item = items.shift() as string
      this.turns.splice(index, 1)
      if (items.length > 0) this.turns.push(key)
      else this.waiting.delete(key)
      this.queued.delete(item)
      this.start(key, item)
    }
  }

  private start(key: string, item: string): void {
    this.running.add(item)
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1)
    this.total += 1
    void this.o
      .run(item)
      .catch((error: unknown) => this.o.onError(item, error))
      .finally(() => {
        this.running.delete(item)
        const left = (this.inFlight.get(key) ?? 1) - 1
        if (left === 0) this.inFlight.delete(key)
        else this.inFlight.set(key, left)
        this.total -= 1
        const again = this.dirty.get(item)
        if (again !== undefined) {
          this.dirty.delete(item)
          this.add(again, item)
        }
        this.pump()
        if (this.size === 0) {
          const waiters = this.idleWaiters
          this.idleWaiters = []
          for (const resolve of waiters) resolve()
        }
      })
  }
}
