/**
 * What the manager runs: controller-runtime's Runnable (one method) with the few facts the manager
 * needs to order it. Everything long-running in ironpool is one of these.
 */

/** Start order; stop runs in reverse. Leader-only runnables come after all three. */
export const RUNNABLE_GROUPS = ['servers', 'caches', 'others'] as const
export type RunnableGroup = (typeof RUNNABLE_GROUPS)[number]

export interface Runnable {
  /** For logs and errors. */
  readonly name: string
  /**
   * Runs until signal aborts, then returns once its work in flight is done. Rejecting before the
   * abort fails the manager; rejecting with the abort reason (or an AbortError) afterwards is a clean stop.
   */
  start(signal: AbortSignal): Promise<void>
  /** Default 'others'. */
  readonly group?: RunnableGroup
  /** Started only while this replica leads (when the manager has a leader election). */
  readonly needLeaderElection?: boolean
  /**
   * Resolves once later groups may rely on it (a server listening, a cache synced); the manager waits
   * for it before starting the next group. Absent: ready as soon as started.
   */
  waitReady?(signal: AbortSignal): Promise<void>
}

/**
 * The seam for leader election (the LeaderElector lives in the core): campaign until signal aborts,
 * call onStartedLeading with a signal that aborts when leadership ends, and resolve 'lost' when
 * leadership was lost, or 'stopped' after signal aborted.
 */
export type LeaderElection = (signal: AbortSignal, onStartedLeading: (leaderSignal: AbortSignal) => void) => Promise<'lost' | 'stopped'>

/** True for the errors a runnable throws because it was told to stop. */
export function isCancellation(error: unknown, signal: AbortSignal): boolean {
  if (!signal.aborted) return false
  return error === signal.reason || (error instanceof Error && error.name === 'AbortError')
}
