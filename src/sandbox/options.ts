/**
 * The sandbox's settings: defaults short enough that every change shows within seconds, the rules that
 * refuse a start (all errors at once, each naming its flag), and the pools the settings imply.
 */
import {formatDuration, POOL_KIND_NAMES, POOL_KINDS, isPoolKindName, type PoolKind} from '../core/index.ts'

export const SANDBOX_DEFAULTS = {
  pools: 6,
  /** A poollet silent this long turns Unknown: four missed heartbeats. */
  gracePeriodMs: 4_000,
  heartbeatIntervalMs: 1_000,
} as const

/** Keys 1..9 select a pool; more pools than that are reached with the arrow keys. */
export const MAX_POOLS = 50

export interface SandboxInput {
  pools: number
  kinds: string
  gracePeriodMs: number
  heartbeatIntervalMs: number
  script?: string
}

export interface SandboxPool {
  kind: PoolKind
  name: string
}

export interface SandboxOptions {
  pools: SandboxPool[]
  kinds: PoolKind[]
  gracePeriodMs: number
  heartbeatIntervalMs: number
  /** Half the interval, as the poollet's own defaults have it: an answer never arrives too late to use. */
  heartbeatStatusTimeoutMs: number
  /** Four intervals, as the poollet's defaults (10s/40s) have it. */
  heartbeatLeaseDurationMs: number
  script?: string
}

export type SandboxValidation = {ok: true; options: SandboxOptions} | {ok: false; errors: string[]}

export function validateSandboxOptions(input: SandboxInput): SandboxValidation {
  const errors: string[] = []
  if (!Number.isInteger(input.pools) || input.pools < 1 || input.pools > MAX_POOLS) {
    errors.push(`--pools must be a whole number from 1 to ${MAX_POOLS} (got ${input.pools})`)
  }
  const names = input.kinds.split(',').map((k) => k.trim()).filter(Boolean)
  const unknown = names.filter((n) => !isPoolKindName(n))
  if (names.length === 0) errors.push(`--kinds must name at least one kind of: ${POOL_KIND_NAMES.join(', ')}`)
  else if (unknown.length > 0) errors.push(`--kinds: ${unknown.map((n) => JSON.stringify(n)).join(', ')} not a pool kind; valid kinds: ${POOL_KIND_NAMES.join(', ')}`)
  const interval = input.heartbeatIntervalMs
  if (interval <= 0) errors.push(`--heartbeat-interval must be > 0 (got ${formatDuration(interval)})`)
  // A grace period within one heartbeat would mark healthy pools Unknown between two of their beats.
  if (input.gracePeriodMs <= interval) {
    errors.push(`--grace-period (${formatDuration(input.gracePeriodMs)}) must be greater than --heartbeat-interval (${formatDuration(interval)})`)
  }
  if (errors.length > 0) return {ok: false, errors}

  const kinds = [...new Set(names)].filter(isPoolKindName).map((n) => POOL_KINDS[n])
  return {
    ok: true,
    options: {
      pools: planPools(kinds, input.pools),
      kinds,
      gracePeriodMs: input.gracePeriodMs,
      heartbeatIntervalMs: interval,
      heartbeatStatusTimeoutMs: interval / 2,
      heartbeatLeaseDurationMs: interval * 4,
      script: input.script,
    },
  }
}

/** `count` pools spread round-robin over the kinds, numbered per kind: machine-1, volume-1, bucket-1, machine-2... */
export function planPools(kinds: readonly PoolKind[], count: number): SandboxPool[] {
  const perKind = new Map<string, number>()
  return Array.from({length: count}, (_, i) => {
    const kind = kinds[i % kinds.length] as PoolKind
    const n = (perKind.get(kind.name) ?? 0) + 1
    perKind.set(kind.name, n)
    return {kind, name: `${kind.name}-${n}`}
  })
}
