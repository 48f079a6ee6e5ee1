/**
 * The shapes of the objects ironpool reads and writes, in one place. They mirror deploy/crds (pools)
 * and coordination.k8s.io/v1 (Leases) but carry no client library types, so src/core stays I/O-free.
 */

export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const
export type ConditionStatus = (typeof CONDITION_STATUSES)[number]

/** A pool condition, fields in the JSON order IronCore uses. Times are RFC 3339 strings. */
export interface PoolCondition {
  type: string
  status: ConditionStatus
  reason: string
  message: string
  /** Omitted when 0. */
  observedGeneration?: number
  /** IronCore's API serves a zero time as null. */
  lastUpdateTime?: string | null
  lastTransitionTime?: string | null
}

/** The fields of a condition, in IronCore's JSON order. */
export const CONDITION_FIELDS = ['type', 'status', 'reason', 'message', 'observedGeneration', 'lastUpdateTime', 'lastTransitionTime'] as const satisfies readonly (keyof PoolCondition)[]
export type ConditionField = (typeof CONDITION_FIELDS)[number]

/**
 * What the serving API can hold of a pool kind's status, learnt from it at start (OpenAPI): whether the
 * status has a conditions list at all (IronCore's BucketPool has none), and which condition fields it
 * keeps (IronCore's VolumePoolCondition has no lastUpdateTime). A write carries nothing else.
 */
export interface StatusWritePlan {
  conditions: boolean
  conditionFields: readonly ConditionField[]
}

/** ironpool's own CRDs: conditions with every field. */
export const FULL_WRITE_PLAN: StatusWritePlan = {conditions: true, conditionFields: CONDITION_FIELDS}

export interface Taint {
  key: string
  value?: string
  effect: string
}

export interface PoolSpec {
  providerID?: string
  taints?: Taint[]
}

/** The status of any pool kind; kind-specific fields other than conditions pass through untouched. */
export interface PoolStatus {
  state?: string
  conditions?: PoolCondition[]
  [field: string]: unknown
}

export interface ObjectMeta {
  name: string
  uid?: string
  resourceVersion?: string
  generation?: number
  creationTimestamp?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
}

/** A MachinePool, VolumePool or BucketPool. */
export interface Pool {
  apiVersion: string
  kind: string
  metadata: ObjectMeta
  spec?: PoolSpec
  status?: PoolStatus
}

/** The spec of a coordination.k8s.io/v1 Lease; MicroTime fields are strings with six fractional digits. */
export interface LeaseSpec {
  holderIdentity?: string
  leaseDurationSeconds?: number
  acquireTime?: string
  renewTime?: string
  leaseTransitions?: number
}

export interface Lease {
  name: string
  namespace: string
  resourceVersion?: string
  spec: LeaseSpec
  /**
   * The object as the server returned it, opaque to the core. Carried along (spread) by every change the
   * core makes, so that the edge writes back everything the holder does not own (labels, annotations,
   * ownerReferences, finalizers, other spec fields) exactly as the server has it.
   */
  raw?: unknown
}
