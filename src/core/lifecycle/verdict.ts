/**
 * The verdict record: why the engine marked a pool, or why a silent pool is not marked (yet). The
 * engine keeps one per overdue pool and hands it out (PoolLifecycle.verdict(name)); a mark carries
 * it on its Event (annotation {@link VERDICT_ANNOTATION}, JSON), so a restarted controller or an
 * operator's laptop (`ironpool pool why`) reads the same record the engine judged by. The dry run
 * (`--dry-run`) writes the same record on its WouldMarkUnknown Event.
 *
 * Every field is plain JSON. Times an operator reads are wall-clock RFC 3339 strings of the
 * controller's clock (labelled as such); durations are the controller's monotonic milliseconds.
 */

/** The annotation on a mark's Event (and a dry run's) that holds the record, as JSON. */
export const VERDICT_ANNOTATION = 'ironpool.ironcore.dev/verdict'
/** The record's schema version, in the record: a reader refuses a newer major. */
export const VERDICT_VERSION = 1
/** The Event reason of a mark the dry run would have written. */
export const WOULD_MARK_REASON = 'WouldMarkUnknown'

/**
 * Where an overdue pool stands; exactly one at a time, each with its next step:
 * - due: past its deadline, to be confirmed (a look is armed at once);
 * - confirming: the confirming read is queued or in flight (its deadline bounds it);
 * - writing: the Unknown write is queued or in flight;
 * - settling: a write of unknown outcome is being read back;
 * - held: blind, or held by the breaker (--max-unhealthy), or in the breaker's hold window: looked at
 *   when the view is whole again or the hold ends;
 * - retrying: a confirm or write failed; looked at again after a backoff;
 * - unmarkable: the API cannot hold a mark for it (reported once); looked at again after a long backoff
 *   (ten grace periods);
 * - marked: Ready=Unknown is on the pool (or, in a dry run, would be): nothing more to do until it
 *   progresses.
 */
export const OVERDUE_STATES = ['due', 'confirming', 'writing', 'settling', 'held', 'retrying', 'unmarkable', 'marked'] as const
export type OverdueState = (typeof OVERDUE_STATES)[number]

/** What holds a pool in state 'held'. */
export type HoldReason = 'blind' | 'breaker' | 'breaker-window' | 'not-leader'

export interface VerdictRecord {
  version: typeof VERDICT_VERSION
  kind: string
  pool: string
  uid?: string
  /** The controller's identity (its leader-election identity, or its host name). */
  controller: string
  dryRun: boolean
  state: OverdueState
  /** When the pool entered its state, on the controller's wall clock. */
  stateSince: string
  hold?: HoldReason
  /** The last sign of life seen, as the API showed it, and when this controller saw it. */
  lastProgress: {
    renewTime?: string
    leaseResourceVersion?: string
    readyStatus?: string
    /** On the controller's wall clock. */
    observedAt: string
  }
  gracePeriodMs: number
  /** Silence counted against the grace period (blind time cut out), as of `at`. */
  silenceMs: number
  /** Blind time between the last progress and `at` that did not count as silence. */
  blindExcludedMs: number
  /** Why the controller was blind in that time (the sight's and the watches' reasons), in order. */
  blindReasons: string[]
  confirm?: {outcome: 'silent' | 'renewed' | 'failed'; at: string; detail?: string}
  retries: number
  lastError?: string
  breaker?: {tripped: boolean; unhealthy: number; total: number}
  limiter: {queued: number; inFlight: number}
  /** When the engine looks at the pool next, on the controller's wall clock. */
  nextLookAt?: string
  /** When this record was taken, on the controller's wall clock. */
  at: string
}
