/**
 * The core's LeaseStore port on client-node: the Leases of one namespace.
 *
 * A Lease carries fields the holder does not own (labels, annotations, ownerReferences, finalizers,
 * spec.preferredHolder, spec.strategy, whatever comes next). IronCore's heartbeat changes only the spec
 * fields it owns, and so does this store: each Lease it hands out keeps the object as the server
 * returned it (Lease.raw, opaque to the core), and an update writes that object back with only the
 * holder's five spec fields changed, under its resourceVersion as precondition. PUT rather than a merge
 * patch, because the leader-election Role grants update, not patch.
 */
import type {KubeConfig, V1Lease} from '@kubernetes/client-node'
import {type LeaseStore, type Lease, type LeaseSpec, NotFoundError} from '../../core/index.ts'
import {attempt} from '../http/api-errors.ts'
import {apiRequest} from '../http/api-request.ts'

/** The spec fields a holder writes; every other field of a Lease is kept as the server has it. */
export const HOLDER_FIELDS = ['holderIdentity', 'leaseDurationSeconds', 'acquireTime', 'renewTime', 'leaseTransitions'] as const satisfies readonly (keyof LeaseSpec)[]

/** Bounds each request when the caller sets nothing: well under a default Lease (40 s). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000

export interface LeaseStoreOptions {
  /** The deadline of each request to the API server. Default {@link DEFAULT_REQUEST_TIMEOUT_MS}. */
  requestTimeoutMs?: number
}

/** A Lease as the API serves it: the wire JSON of a read, a write's answer or a watch event. */
export type ServedLease = Pick<V1Lease, 'metadata'> & {spec?: object}

const time = (value: unknown) => (typeof value === 'string' ? value : value instanceof Date ? value.toISOString() : undefined)
const count = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined)
const positive = (value: unknown) => (count(value) === 0 ? undefined : count(value))
const text = (value: unknown) => (typeof value === 'string' ? value : undefined)

/** The core's view of a served Lease: its spec fields, each read only when well-formed (validateLease() reports the rest). */
export function toLease(served: ServedLease): Lease {
  const spec = (served.spec ?? {}) as Record<string, unknown>
  return {
    name: served.metadata?.name ?? '',
    namespace: served.metadata?.namespace ?? '',
    resourceVersion: served.metadata?.resourceVersion,
    spec: {
      holderIdentity: text(spec.holderIdentity),
      leaseDurationSeconds: positive(spec.leaseDurationSeconds),
      acquireTime: time(spec.acquireTime),
      renewTime: time(spec.renewTime),
      leaseTransitions: count(spec.leaseTransitions),
    },
    raw: served,
  }
}

/** The object to send: the served one (if any) with the holder's fields from lease.spec, nothing else changed. */
export function toV1Lease(lease: Lease): V1Lease {
  const served = (lease.raw ?? {}) as V1Lease
  const metadata: V1Lease['metadata'] = {...served.metadata, name: lease.name, namespace: lease.namespace}
  if (lease.resourceVersion) metadata.resourceVersion = lease.resourceVersion
  else delete metadata.resourceVersion
  const spec: Record<string, unknown> = {...served.spec}
  for (const field of HOLDER_FIELDS) {
    if (lease.spec[field] === undefined) delete spec[field]
    else spec[field] = lease.spec[field]
  }
  return {...served, apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec: spec}
}

/** The path of the Leases of a namespace, or of one of them. */
export function leasePath(namespace: string, name?: string): string {
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`
  return name === undefined ? collection : `${collection}/${encodeURIComponent(name)}`
}

export function createLeaseStore(kc: KubeConfig, namespace: string, options: LeaseStoreOptions = {}): LeaseStore {
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const resource = (name: string) => `lease ${namespace}/${name}`
  return {
    async get(name) {
      try {
        return toLease(await attempt({verb: 'get', resource: resource(name)}, () => apiRequest<ServedLease>(kc, {method: 'GET', path: leasePath(namespace, name), timeoutMs})))
      } catch (error) {
        if (error instanceof NotFoundError) return undefined
        throw error
      }
    },
    async create(lease) {
      return toLease(
        await attempt({verb: 'create', resource: resource(lease.name)}, () =>
          apiRequest<ServedLease>(kc, {method: 'POST', path: leasePath(namespace), body: toV1Lease({...lease, resourceVersion: undefined}), timeoutMs}),
        ),
      )
    },
    async update(lease) {
      return toLease(
        await attempt({verb: 'update', resource: resource(lease.name)}, () =>
          apiRequest<ServedLease>(kc, {method: 'PUT', path: leasePath(namespace, lease.name), body: toV1Lease(lease), timeoutMs}),
        ),
      )
    },
  }
}
