/**
 * The Lease records leader election writes, as client-go's resourcelock writes them, as pure
 * functions of the Lease last seen and the time. Kept apart from the elector so that its loop reads
 * as the protocol and this file as the data.
 */
import {formatMicroTime} from '../conditions.ts'
import type {Lease, LeaseSpec} from '../types.ts'

export interface LeaderRecordContext {
  identity: string
  leaseDurationMs: number
  /** Milliseconds since the epoch. */
  now: number
}

/** Whole seconds, rounded up, so that no reader of the record thinks the lease shorter than it is. */
export function leaseDurationSeconds(ms: number): number {
  return Math.ceil(ms / 1000)
}

/** A new Lease held by us: the first holder, so no transitions. */
export function createdLease(name: string, namespace: string, ctx: LeaderRecordContext): Lease {
  const now = formatMicroTime(new Date(ctx.now))
  const spec = {holderIdentity: ctx.identity, leaseDurationSeconds: leaseDurationSeconds(ctx.leaseDurationMs), acquireTime: now, renewTime: now, leaseTransitions: 0}
  return {name, namespace, spec}
}

/** Our Lease with a fresh renewTime; acquireTime, transitions and resourceVersion as last seen. */
export function renewedLease(base: Lease, ctx: LeaderRecordContext): Lease {
  return withSpec(base, {...base.spec, leaseDurationSeconds: leaseDurationSeconds(ctx.leaseDurationMs), renewTime: formatMicroTime(new Date(ctx.now))})
}

/** Another's (or nobody's) Lease made ours: a new holder is a transition. */
export function takenOverLease(base: Lease, ctx: LeaderRecordContext): Lease {
  const now = formatMicroTime(new Date(ctx.now))
  return withSpec(base, {
    holderIdentity: ctx.identity,
    leaseDurationSeconds: leaseDurationSeconds(ctx.leaseDurationMs),
    acquireTime: now,
    renewTime: now,
    leaseTransitions: (base.spec.leaseTransitions ?? 0) + 1,
  })
}

/** Given back, as client-go's ReleaseOnCancel writes it: no holder, 1 s, times now, transitions kept. */
export function releasedLease(base: Lease, now: number): Lease {
  const time = formatMicroTime(new Date(now))
  return withSpec(base, {leaseDurationSeconds: 1, acquireTime: time, renewTime: time, leaseTransitions: base.spec.leaseTransitions ?? 0})
}

/**
 * What identifies a record for "has it changed?": every spec field, none of the metadata (a label
 * edit is not a renewal). Compared only with the previous key, never read as times.
 */
export function recordKey(spec: LeaseSpec): string {
  return JSON.stringify([spec.holderIdentity, spec.leaseDurationSeconds, spec.acquireTime, spec.renewTime, spec.leaseTransitions])
}

function withSpec(base: Lease, spec: LeaseSpec): Lease {
  return {...base, spec}
}
