/**
 * The one way ironpool writes a pool's Ready condition, for the poollet and the controller alike:
 * decide from the pool as it is now, change the Ready entry alone, write with the pool's
 * resourceVersion as precondition, and on a conflict read again and decide again.
 */
import type {Clock} from './clock.ts'
import {READY_CONDITION} from './pool-kinds.ts'
import {conditionDiffers, findCondition, setCondition, type DesiredCondition} from './conditions.ts'
import {ConflictError, NotFoundError} from './errors.ts'
import type {PoolStatusStore} from './ports.ts'
import {FULL_WRITE_PLAN, type Pool, type PoolCondition, type StatusWritePlan} from './types.ts'

/**
 * Conflicts are answered by re-reading: each one means another writer got there first, so a few
 * attempts settle it; past that the caller retries on its own schedule (the next tick or deadline).
 */
export const READY_WRITE_ATTEMPTS = 5

export type ReadyWriteResult =
  | {outcome: 'written'; pool: Pool}
  /** The pool's Ready already means what was decided: nothing written. */
  | {outcome: 'unchanged'; pool: Pool}
  /** decide() returned undefined: the writer no longer wants to write. */
  | {outcome: 'declined'; pool: Pool}
  | {outcome: 'not-found'}
  /** The serving API has no conditions for this kind (the plan): nothing written. */
  | {outcome: 'not-writable'; pool: Pool}
  /** The server answered the write, but the object it returned does not carry the decided Ready: not done. */
  | {outcome: 'not-held'; pool: Pool}

export interface ReadyWriteOptions {
  store: PoolStatusStore
  clock: Clock
  name: string
  /** The desired Ready for the pool as it is now, or undefined to write nothing. Called again after each conflict. */
  decide: (pool: Pool) => Omit<DesiredCondition, 'type'> | undefined
  /** A pool already in hand (from a cache or the previous tick); read from the store when absent. */
  current?: Pool
  attempts?: number
  /** Ends the reads and writes in flight (e.g. leadership lost): no write may land after it aborts. */
  signal?: AbortSignal
  /** What the serving API can hold. Default {@link FULL_WRITE_PLAN} (ironpool's CRDs). */
  plan?: StatusWritePlan
  /** Told the Ready entry of each write just before it is sent (a write of unknown outcome is recognised by it later). */
  onSend?: (ready: PoolCondition) => void
}

export async function writeReady(options: ReadyWriteOptions): Promise<ReadyWriteResult> {
  const {store, clock, name, decide, signal} = options
  const attempts = options.attempts ?? READY_WRITE_ATTEMPTS
  const plan = options.plan ?? FULL_WRITE_PLAN
  let pool = options.current ?? (await store.get(name, signal))
  for (let attempt = 1; ; attempt++) {
    if (pool === undefined) return {outcome: 'not-found'}
    const decided = decide(pool)
    if (decided === undefined) return {outcome: 'declined', pool}
    const desired: DesiredCondition = {type: READY_CONDITION, ...decided}
    const conditions = pool.status?.conditions
    if (!conditionDiffers(findCondition(conditions, READY_CONDITION), desired)) return {outcome: 'unchanged', pool}
    if (!plan.conditions) return {outcome: 'not-writable', pool}
    try {
      const next = setCondition(conditions, desired, new Date(clock.wall()), plan)
      signal?.throwIfAborted()
      const ready = findCondition(next, READY_CONDITION)
      if (ready !== undefined) options.onSend?.(ready)
      const written = await store.writeConditions(name, pool.metadata.resourceVersion ?? '', next, signal)
      // A write counts only if the server kept it: an API that drops unknown fields answers 200 all the same.
      const held = !conditionDiffers(findCondition(written.status?.conditions, READY_CONDITION), desired)
      return {outcome: held ? 'written' : 'not-held', pool: written}
    } catch (error) {
      if (error instanceof NotFoundError) return {outcome: 'not-found'}
      if (!(error instanceof ConflictError) || attempt >= attempts) throw error
      pool = await store.get(name, signal)
    }
  }
}
