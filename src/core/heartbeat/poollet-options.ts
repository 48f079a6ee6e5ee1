/**
 * The poollet's settings: their defaults, in this one place, and the rules that refuse a start. The
 * command hands over what the user typed; validation returns every error at once (so the user fixes
 * them in one go), each naming the flag, the rule and the value.
 */
import {formatDuration, parseDuration} from '../durations.ts'
import {errorMessage} from '../errors.ts'
import {POOL_KIND_NAMES, POOL_KINDS, isPoolKindName, type PoolKind} from '../pool-kinds.ts'

/** IronCore's and Kubernetes' node numbers (reference/iep15.md): a 40 s Lease renewed every 10 s. */
export const POOLLET_DEFAULTS = {
  heartbeatIntervalMs: 10_000,
  heartbeatLeaseDurationMs: 40_000,
  /** Half the interval: a probe answer never arrives later than the tick could use it. */
  heartbeatStatusTimeoutMs: 5_000,
  /** How long to wait for a well-known runtime socket to appear, as IronCore's poollets do. */
  runtimeDiscoveryTimeoutMs: 20_000,
} as const

/** The flags these settings come from, so that messages and the command spell them alike. */
export const POOLLET_FLAGS = {
  kind: '--kind',
  poolName: '--pool-name',
  heartbeatInterval: '--heartbeat-interval',
  heartbeatLeaseDuration: '--heartbeat-lease-duration',
  heartbeatStatusTimeout: '--heartbeat-status-timeout',
  runtimeDiscoveryTimeout: '--runtime-socket-discovery-timeout',
} as const

/** What the user gave, as text; an absent duration takes its default. */
export interface PoolletInput {
  kind: string
  poolName: string
  heartbeatInterval?: string
  heartbeatLeaseDuration?: string
  heartbeatStatusTimeout?: string
  runtimeDiscoveryTimeout?: string
}

export interface PoolletOptions {
  kind: PoolKind
  poolName: string
  heartbeatIntervalMs: number
  heartbeatLeaseDurationMs: number
  heartbeatStatusTimeoutMs: number
  runtimeDiscoveryTimeoutMs: number
}

export type PoolletValidation = {ok: true; options: PoolletOptions} | {ok: false; errors: string[]}

/** RFC 1123 subdomain, as Kubernetes checks object names: the pool is also the Lease's name. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const DNS_SUBDOMAIN_MAX = 253

export function validatePoolletOptions(input: PoolletInput): PoolletValidation {
  const errors: string[] = []
  const duration = (flag: string, text: string | undefined, fallback: number): number | undefined => {
    if (text === undefined) return fallback
    try {
      return parseDuration(text)
    } catch (error) {
      errors.push(`${flag} ${JSON.stringify(text)} is not a duration (${errorMessage(error)}); write e.g. 10s, 1m30s, 500ms`)
      return undefined
    }
  }

  const kind = isPoolKindName(input.kind) ? POOL_KINDS[input.kind] : undefined
  if (kind === undefined) {
    errors.push(`${POOLLET_FLAGS.kind} ${JSON.stringify(input.kind)} is not a pool kind; valid kinds: ${POOL_KIND_NAMES.join(', ')}`)
  }
  if (!isDnsSubdomain(input.poolName)) {
    errors.push(
      `${POOLLET_FLAGS.poolName} ${JSON.stringify(input.poolName)} must be a valid DNS subdomain name ` +
        `(lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most ${DNS_SUBDOMAIN_MAX} characters)`,
    )
  }

  const interval = duration(POOLLET_FLAGS.heartbeatInterval, input.heartbeatInterval, POOLLET_DEFAULTS.heartbeatIntervalMs)
  const lease = duration(POOLLET_FLAGS.heartbeatLeaseDuration, input.heartbeatLeaseDuration, POOLLET_DEFAULTS.heartbeatLeaseDurationMs)
  const timeout = duration(POOLLET_FLAGS.heartbeatStatusTimeout, input.heartbeatStatusTimeout, POOLLET_DEFAULTS.heartbeatStatusTimeoutMs)
  const discovery = duration(POOLLET_FLAGS.runtimeDiscoveryTimeout, input.runtimeDiscoveryTimeout, POOLLET_DEFAULTS.runtimeDiscoveryTimeoutMs)

  // Rules comparing two flags are checked only when both parsed, so one typo gives one message.
  if (interval !== undefined && interval <= 0) {
    errors.push(`${POOLLET_FLAGS.heartbeatInterval} must be > 0 (got ${formatDuration(interval)})`)
  }
  if (interval !== undefined && lease !== undefined && lease <= interval) {
    errors.push(
      `${POOLLET_FLAGS.heartbeatLeaseDuration} (${formatDuration(lease)}) must be greater than ` +
        `${POOLLET_FLAGS.heartbeatInterval} (${formatDuration(interval)})`,
    )
  }
  if (timeout !== undefined && (timeout <= 0 || (interval !== undefined && timeout >= interval))) {
    errors.push(
      `${POOLLET_FLAGS.heartbeatStatusTimeout} must be > 0 and < ${POOLLET_FLAGS.heartbeatInterval} ` +
        `(got ${formatDuration(timeout)}${interval === undefined ? '' : `, interval ${formatDuration(interval)}`})`,
    )
  }

  if (errors.length > 0 || kind === undefined || interval === undefined || lease === undefined || timeout === undefined || discovery === undefined) {
    return {ok: false, errors}
  }
  return {
    ok: true,
    options: {
      kind,
      poolName: input.poolName,
      heartbeatIntervalMs: interval,
      heartbeatLeaseDurationMs: lease,
      heartbeatStatusTimeoutMs: timeout,
      runtimeDiscoveryTimeoutMs: discovery,
    },
  }
}

export function isDnsSubdomain(name: string): boolean {
  return name.length <= DNS_SUBDOMAIN_MAX && DNS_SUBDOMAIN.test(name)
}
