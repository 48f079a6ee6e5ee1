/**
 * What an operator sees of one pool: its Ready condition beside its Lease, with ages. Ages compare a
 * poollet's timestamps with the local clock, so they are display only; where they cannot be right (a
 * time in the future) the view says so instead of showing a negative age.
 */
import {findCondition} from '../../conditions.ts'
import {unmarkableMessage} from '../lifecycle-reports.ts'
import {READY_CONDITION, type PoolKind} from '../../pool-kinds.ts'
import type {ConditionStatus, Lease, Pool} from '../../types.ts'

export interface PoolView {
  name: string
  kind: PoolKind['name']
  ready: ConditionStatus | 'None'
  reason: string
  message: string
  /** Ready's lastTransitionTime as written, and its age in ms; undefined when unknown. */
  lastTransitionTime?: string
  sinceMs?: number
  holder?: string
  /** The Lease's renewTime as written, and its age in ms. */
  renewTime?: string
  renewedMs?: number
  leaseDurationSeconds?: number
  /** renewTime + duration (RFC 3339): when the Lease would expire without another renewal. */
  expiresAt?: string
  /** expired: renewTime + duration is past on the local clock; missing: no Lease; no-renew: a Lease never renewed. */
  lease: 'valid' | 'expired' | 'missing' | 'no-renew'
  /** Warnings about timestamps that look skewed against the local clock. */
  skew: string[]
  /** Other notes for the operator, e.g. a stale pool that the API cannot hold a mark for. */
  notes: string[]
  /**
   * For a pool Ready=True with a Lease: when it is overdue by the operator's reckoning (see
   * {@link overdueNote}), RFC 3339; a watch redraws the row then, as no event announces it.
   */
  overdueAt?: string
}

export interface PoolViewOptions {
  /** False when the API has no conditions for the kind (IronCore's BucketPool): staleness cannot be marked. Default true. */
  canMark?: boolean
}

/**
 * A pool still Ready=True whose Lease expired more than one lease duration ago: past any grace period
 * a controller would sensibly use (IronCore's: 50 s against a 40 s Lease), yet not marked Unknown.
 * The controller is blind, held by its breaker, retrying, or not running; its metric
 * ironpool_controller_pools_overdue says which pools it holds. Display only, as EXPIRED is.
 */
export function overdueNote(expiredForMs: number): string {
  return `Ready=True, but its Lease expired ${formatAge(expiredForMs)} ago and it is not marked Unknown: the controller may be blind, held by --max-unhealthy, retrying, or not running (ironpool_controller_pools_overdue)`
}

/** Timestamps up to this far ahead are ordinary clock jitter between machines, not skew worth a word. */
const SKEW_TOLERANCE_MS = 2_000

export function poolView(kind: PoolKind, pool: Pool, lease: Lease | undefined, now: number, options: PoolViewOptions = {}): PoolView {
  const ready = findCondition(pool.status?.conditions, READY_CONDITION)
  const skew: string[] = []
  const age = (field: string, time: string | null | undefined): number | undefined => {
    if (time == null) return undefined
    const at = Date.parse(time)
    if (Number.isNaN(at)) {
      skew.push(`${field} ${time} is not a time`)
      return undefined
    }
    if (at - now > SKEW_TOLERANCE_MS) skew.push(`${field} ${time} is in the future: the clocks look skewed`)
    return Math.max(0, now - at)
  }
  const sinceMs = age('Ready lastTransitionTime', ready?.lastTransitionTime)
  const renewedMs = age('Lease renewTime', lease?.spec.renewTime)
  const duration = lease?.spec.leaseDurationSeconds
  let leaseState: PoolView['lease'] = 'missing'
  if (lease !== undefined) {
    if (lease.spec.renewTime === undefined || renewedMs === undefined) leaseState = 'no-renew'
    else leaseState = duration !== undefined && renewedMs > duration * 1000 ? 'expired' : 'valid'
  }
  const notes = options.canMark === false && leaseState !== 'valid' ? [unmarkableMessage(kind, 'no-conditions')] : []
  let overdueAt: string | undefined
  if (options.canMark !== false && ready?.status === 'True' && renewedMs !== undefined && duration !== undefined && lease?.spec.renewTime !== undefined) {
    // Overdue once the Lease has been expired for one more lease duration.
    const expiredForMs = renewedMs - duration * 1000
    overdueAt = new Date(Date.parse(lease.spec.renewTime) + 2 * duration * 1000).toISOString()
    if (expiredForMs > duration * 1000) notes.push(overdueNote(expiredForMs))
  }
  return {
    name: pool.metadata.name,
    kind: kind.name,
    ready: ready?.status ?? 'None',
    reason: ready?.reason ?? '',
    message: ready?.message ?? '',
    lastTransitionTime: ready?.lastTransitionTime ?? undefined,
    sinceMs,
    holder: lease?.spec.holderIdentity,
    renewTime: lease?.spec.renewTime,
    renewedMs,
    leaseDurationSeconds: duration,
    expiresAt: lease === undefined ? undefined : leaseExpiry(lease.spec),
    lease: leaseState,
    skew,
    // Display only, as EXPIRED is: the controller judges staleness on its own clock and says so by Event.
    notes,
    overdueAt,
  }
}

/**
 * When a Lease would expire without another renewal (renewTime + leaseDurationSeconds, RFC 3339), or
 * undefined when either is missing or unreadable. Display only: the controller never judges expiry from
 * a poollet's timestamps.
 */
export function leaseExpiry(spec: Lease['spec']): string | undefined {
  const renewed = spec.renewTime === undefined ? Number.NaN : Date.parse(spec.renewTime)
  if (Number.isNaN(renewed) || spec.leaseDurationSeconds === undefined) return undefined
  return new Date(renewed + spec.leaseDurationSeconds * 1000).toISOString()
}

/** IronCore's poollets hold their pool's Lease as `<pool>_<uuid>`; any other holder is not that pool's poollet. */
export function holderMatchesPool(holder: string, pool: string): boolean {
  return holder.startsWith(`${pool}_`)
}

/** kubectl's age format: 45s, 3m12s, 5h4m, 3d2h, 400d. */
export function formatAge(ms: number | undefined): string {
  if (ms === undefined) return '<none>'
  const s = Math.floor(ms / 1000)
  if (s < 120) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ''}`
  if (m < 180) return `${m}m`
  const h = Math.floor(m / 60)
  if (h < 8) return `${h}h${m % 60 ? `${m % 60}m` : ''}`
  if (h < 48) return `${h}h`
  const d = Math.floor(h / 24)
  if (d < 8) return `${d}d${h % 24 ? `${h % 24}h` : ''}`
  return `${d}d`
}
