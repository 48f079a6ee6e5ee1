/**
 * Condition helpers with IronCore's timestamp rules: lastUpdateTime moves on every set,
 * lastTransitionTime only when the condition is new or its status changed.
 */
import {FULL_WRITE_PLAN, type ConditionStatus, type PoolCondition, type StatusWritePlan} from './types.ts'

/** What a writer decides: the meaning of a condition, without its timestamps. */
export interface DesiredCondition {
  type: string
  status: ConditionStatus
  reason: string
  message: string
  observedGeneration?: number
}

/** The first condition of the given type, as IronCore's helpers find it (entries that are not objects are skipped). */
export function findCondition(conditions: readonly PoolCondition[] | undefined, type: string): PoolCondition | undefined {
  if (!Array.isArray(conditions)) return undefined
  return (conditions as readonly unknown[]).find((c): c is PoolCondition => typeof c === 'object' && c !== null && (c as {type?: unknown}).type === type)
}

/** True when the meaning differs: status, reason, message or observedGeneration. Timestamps are ignored. */
export function conditionDiffers(current: PoolCondition | undefined, desired: DesiredCondition): boolean {
  if (current === undefined) return true
  return (
    current.status !== desired.status ||
    current.reason !== desired.reason ||
    current.message !== desired.message ||
    (current.observedGeneration ?? 0) !== (desired.observedGeneration ?? 0)
  )
}

/**
 * A new conditions list with the first condition of desired.type replaced (or appended when absent);
 * every other entry is kept as it was, in place. The new entry carries only the fields the plan says
 * the server keeps (IronCore's VolumePool has no lastUpdateTime).
 */
export function setCondition(
  conditions: readonly PoolCondition[] | undefined,
  desired: DesiredCondition,
  now: Date,
  plan: StatusWritePlan = FULL_WRITE_PLAN,
): PoolCondition[] {
  const list = [...(conditions ?? [])]
  const index = list.findIndex((c) => c.type === desired.type)
  const current = index >= 0 ? list[index] : undefined
  const stamp = formatTime(now)
  const next: PoolCondition = {
    type: desired.type,
    status: desired.status,
    reason: desired.reason,
    message: desired.message,
    ...(desired.observedGeneration ? {observedGeneration: desired.observedGeneration} : {}),
    lastUpdateTime: stamp,
    lastTransitionTime:
      current === undefined || current.status !== desired.status || current.lastTransitionTime == null
        ? stamp
        : current.lastTransitionTime,
  }
  const kept = new Set<string>(plan.conditionFields)
  for (const field of Object.keys(next) as (keyof PoolCondition)[]) if (!kept.has(field)) delete next[field]
  if (index >= 0) list[index] = next
  else list.push(next)
  return list
}

/** RFC 3339 with second precision, as metav1.Time serialises. */
export function formatTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** MicroTime: RFC 3339 with exactly six fractional digits, as the API server requires for Leases. */
export function formatMicroTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
}
