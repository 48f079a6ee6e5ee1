/**
 * The sight's write probe: the controller renews a Lease of its own, proving that a write reaches
 * storage now. Reads alone cannot tell: with etcd refusing writes (NOSPACE) every read answers while
 * no poollet can renew. Replicas share the one Lease; a conflict (another replica renewed it first) is
 * an answer, and a write landed moments ago, so it counts as proof too.
 */
import {formatMicroTime} from '../../conditions.ts'
import type {Clock} from '../../clock.ts'
import {AlreadyExistsError, ConflictError} from '../../errors.ts'
import type {LeaseStore} from '../../ports.ts'

/** The Lease's name, in the leader-election namespace, where the controller's RBAC lets it write. */
export const WRITE_PROBE_LEASE = 'ironpool-write-probe'

export interface WriteProbeOptions {
  leases: LeaseStore
  namespace: string
  holderIdentity: string
  clock: Clock
  name?: string
}

export function writeProbe(o: WriteProbeOptions): (signal: AbortSignal) => Promise<void> {
  const name = o.name ?? WRITE_PROBE_LEASE
  return async () => {
    const renewTime = formatMicroTime(new Date(o.clock.wall()))
    const current = await o.leases.get(name)
    try {
      if (current === undefined) await o.leases.create({name, namespace: o.namespace, spec: {holderIdentity: o.holderIdentity, renewTime}})
      else await o.leases.update({...current, spec: {...current.spec, holderIdentity: o.holderIdentity, renewTime}})
    } catch (error) {
      // Another replica wrote it in between: a write landed.
      if (error instanceof ConflictError || error instanceof AlreadyExistsError) return
      throw error
    }
  }
}
