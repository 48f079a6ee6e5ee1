/**
 * `lease inspect`: one pool's Lease beside its Ready condition, and what looks wrong, in plain words.
 * Pure: computed from what was read and the local clock, so a unit test covers every case. Ages and
 * expiry compare a poollet's timestamps with the local clock and are display only.
 */
import {holderMatchesPool, poolView, type PoolKind, type ConditionStatus, type Lease, type Pool} from '../../core/index.ts'

export interface LeaseInspection {
  kind: PoolKind['name']
  name: string
  pool: {exists: false; resource: string} | {exists: true; resource: string; ready: ConditionStatus | 'None'; reason: string; message: string; lastTransitionTime?: string; sinceMs?: number}
  lease:
    | {exists: false; namespace: string}
    | {
        exists: true
        namespace: string
        holder?: string
        holderMatchesPool: boolean
        acquireTime?: string
        renewTime?: string
        renewedMs?: number
        leaseDurationSeconds?: number
        expiresAt?: string
        /** expiresAt minus now: negative once expired. */
        expiresInMs?: number
        /** 'expired' when renewTime + duration is past on the local clock. */
        state: 'valid' | 'expired' | 'no-renew'
        transitions: number
        resourceVersion?: string
      }
  /** Everything that looks wrong, one sentence each; empty when all is well. */
  problems: string[]
  /** True when the pool or the Lease does not exist: the command exits 1. */
  missing: boolean
}

export function inspectLease(kind: PoolKind, name: string, pool: Pool | undefined, lease: Lease | undefined, now: number): LeaseInspection {
  const resource = `${kind.name}pool ${name}`
  const leaseName = `${kind.leaseNamespace}/${name}`
  // The view wants a pool; without one, an empty stand-in still yields the Lease's ages and state.
  const view = poolView(kind, pool ?? {apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, metadata: {name}}, lease, now)
  const problems: string[] = []
  if (pool === undefined) problems.push(`${resource} does not exist (kubectl get ${kind.plural}; check the name and --kind)`)
  if (lease === undefined) problems.push(`Lease ${leaseName} does not exist: no poollet has heartbeated for this pool`)
  const holder = lease?.spec.holderIdentity
  const matches = holder !== undefined && holderMatchesPool(holder, name)
  if (lease !== undefined && !matches) {
    problems.push(holder === undefined ? `Lease ${leaseName} has no holder` : `holder ${holder} does not match pool ${name}: a poollet holds its pool's Lease as ${name}_<uuid>`)
  }
  if (view.lease === 'expired') problems.push(`Lease ${leaseName} expired at ${view.expiresAt ?? '?'} by the local clock`)
  problems.push(...view.skew)
  return {
    kind: kind.name,
    name,
    pool:
      pool === undefined
        ? {exists: false, resource}
        : {exists: true, resource, ready: view.ready, reason: view.reason, message: view.message, lastTransitionTime: view.lastTransitionTime, sinceMs: view.sinceMs},
    lease:
      lease === undefined
        ? {exists: false, namespace: kind.leaseNamespace}
        : {
            exists: true,
            namespace: kind.leaseNamespace,
            holder,
            holderMatchesPool: matches,
            acquireTime: lease.spec.acquireTime,
            renewTime: view.renewTime,
            renewedMs: view.renewedMs,
            leaseDurationSeconds: view.leaseDurationSeconds,
            expiresAt: view.expiresAt,
            expiresInMs: view.expiresAt === undefined ? undefined : Date.parse(view.expiresAt) - now,
            state: view.lease === 'missing' ? 'no-renew' : view.lease,
            transitions: lease.spec.leaseTransitions ?? 0,
            resourceVersion: lease.resourceVersion,
          },
    problems,
    missing: pool === undefined || lease === undefined,
  }
}
