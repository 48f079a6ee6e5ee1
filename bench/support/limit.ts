/** Runs fn over items with at most `limit` calls in flight; rejects with the first failure. */
export async function forEachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) await fn(items[next++] as T)
  }
  await Promise.all(Array.from({length: Math.min(limit, items.length)}, worker))
}

/** Resolves after ms (bench scripts wait on real time; nothing here is under a fake clock). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Polls until check() is truthy or timeoutMs passes; returns whether it became true. */
export async function pollUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const end = performance.now() + timeoutMs
  for (;;) {
    if (await check()) return true
    if (performance.now() >= end) return false
    await delay(everyMs)
  }
}
