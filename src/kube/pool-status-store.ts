/**
 * The core's PoolStatusStore port on client-node: one kind's pools and the conditions of their status.
 * Writes are JSON merge patches of status.conditions with metadata.resourceVersion as precondition: they
 * work on ironpool's CRDs and on IronCore's aggregated API alike (which replaces the whole list).
 */
import {CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig} from '@kubernetes/client-node'
import {type PoolStatusStore, type PoolKind, type Pool, NotFoundError} from '../core/index.ts'
import {validatePool} from '../deploy/pool-validator.ts'
import {attempt} from './api-errors.ts'
import {DEFAULT_REQUEST_TIMEOUT_MS} from './lease-store.ts'
import {withDeadline} from './request-deadline.ts'

/** Checks an object read from the API before the core trusts it; throws naming the field at fault. */
export function checkedPool(kind: PoolKind, object: unknown): Pool {
  const result = validatePool(kind.name, object)
  if (!result.ok) {
    const name = (object as {metadata?: {name?: string}} | undefined)?.metadata?.name ?? '?'
    throw new Error(`${kind.plural} ${name} is malformed: ${result.field} ${result.problem}`)
  }
  return result.pool
}

export interface PoolStatusStoreOptions {
  /** The deadline of each request to the API server. Default 10 s, as the Lease store's. */
  requestTimeoutMs?: number
}

export function createPoolStatusStore(kc: KubeConfig, kind: PoolKind, options: PoolStatusStoreOptions = {}): PoolStatusStore {
  const api = kc.makeApiClient(CustomObjectsApi)
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const base = {group: kind.group, version: kind.version, plural: kind.plural}
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch)
  return {
    async get(name) {
      try {
        const object: unknown = await attempt({verb: 'get', resource: `${kind.name}pool ${name}`}, () => api.getClusterCustomObject({...base, name}, withDeadline(timeoutMs)))
        return checkedPool(kind, object)
      } catch (error) {
        if (error instanceof NotFoundError) return undefined
        throw error
      }
    },
    async writeConditions(name, resourceVersion, conditions) {
      const body = {metadata: {resourceVersion}, status: {conditions}}
      const written: unknown = await attempt({verb: 'patch', resource: `${kind.name}pool/status ${name}`}, () =>
        api.patchClusterCustomObjectStatus({...base, name, body}, withDeadline(timeoutMs, mergePatch)),
      )
      return checkedPool(kind, written)
    },
  }
}
