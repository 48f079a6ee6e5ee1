/** Waiting on a condition with a deadline: the only way tests synchronise with real processes. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: {timeoutMs?: number; intervalMs?: number} = {},
): Promise<T> {
  // Generous: a deadline only bounds a failure; a healthy run returns as soon as the condition holds,
  // and CI may run on a busy machine where a process start or an API answer takes seconds.
  const timeoutMs = options.timeoutMs ?? 30_000
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const value = await probe()
      if (value !== undefined && value !== false) return value
    } catch (error) {
      lastError = error
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? `: last error ${lastError.message}` : ''
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`)
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50))
  }
}

/** True when no process with this pid exists. */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}
