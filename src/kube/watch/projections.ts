/**
 * What the controller's caches keep of each object (issue 27): the fields a verdict and a write need,
 * made as the object arrives (client-go's SetTransform), so that neither managedFields nor the rest of
 * a pool's status (IronCore's capacity, classes, addresses) nor a Lease's other metadata stay in memory
 * for every pool. Values are copied as served, never coerced: the gate's validation sees what the
 * server sent, field for field.
 *
 * A pool keeps its whole conditions list, not only Ready: the Unknown write is a merge patch of
 * status.conditions, which replaces the list, so it must carry the other writers' conditions as they
 * are. `pool status` and the confirming reads get their objects fresh, whole.
 */
import type {Pool} from '../../core/index.ts'
import type {KubeObject} from './list-watch-store.ts'

/** A Lease as the watch delivers it (raw JSON; toLease() in lease-store.ts converts it). */
export interface RawLease extends KubeObject {
  metadata: {name: string; namespace?: string; resourceVersion?: string}
  spec?: Record<string, unknown>
}

type Loose = Record<string, unknown> | undefined

function pick(from: Loose, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (from === undefined || from === null || typeof from !== 'object') return out
  for (const key of keys) if (from[key] !== undefined) out[key] = from[key]
  return out
}

const POOL_METADATA = ['name', 'uid', 'resourceVersion', 'generation'] as const
const LEASE_METADATA = ['name', 'namespace', 'resourceVersion'] as const
const LEASE_SPEC = ['holderIdentity', 'leaseDurationSeconds', 'acquireTime', 'renewTime', 'leaseTransitions'] as const

/**
 * A pool as the controller's cache keeps it: kind, name, uid, resourceVersion, generation,
 * status.conditions, and of its labels only those named in keepLabels (the zone labels that group
 * correlated silence and the per-zone breaker: a short string or two per pool).
 */
export function projectPool(object: unknown, keepLabels: readonly string[] = []): Pool & KubeObject {
  const raw = (object ?? {}) as Loose & {metadata?: Loose; status?: Loose}
  const metadata = pick(raw.metadata, POOL_METADATA)
  const labels = pick(raw.metadata?.labels as Loose, keepLabels)
  if (Object.keys(labels).length > 0) metadata.labels = labels
  const projected: Record<string, unknown> = {apiVersion: raw.apiVersion, kind: raw.kind, metadata}
  const status = raw.status
  if (status !== undefined && status !== null && typeof status === 'object' && 'conditions' in status) projected.status = {conditions: status.conditions}
  return projected as unknown as Pool & KubeObject
}

/** A Lease as the controller's cache keeps it: name, namespace, resourceVersion and the holder's five spec fields. */
export function projectLease(object: unknown): RawLease {
  const raw = (object ?? {}) as Loose & {metadata?: Loose; spec?: Loose}
  const projected: Record<string, unknown> = {metadata: pick(raw.metadata, LEASE_METADATA)}
  if (raw.spec !== undefined) projected.spec = pick(raw.spec, LEASE_SPEC)
  return projected as unknown as RawLease
}
