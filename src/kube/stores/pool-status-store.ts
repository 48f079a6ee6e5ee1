/**
 * The core's PoolStatusStore port on client-node: one kind's pools and the conditions of their status.
 * Writes are JSON merge patches of status.conditions with metadata.resourceVersion as precondition: they
 * work on ironpool's CRDs and on IronCore's aggregated API alike (which replaces the whole list).
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {type PoolStatusStore, type PoolKind, type Pool, type Logger, NotFoundError} from '../../core/index.ts'
import {validatePool, type Problem} from '../../deploy/crds/pool-validator.ts'
import {attempt} from '../http/api-errors.ts'
import {apiRequest, MERGE_PATCH} from '../http/api-request.ts'
import {DEFAULT_REQUEST_TIMEOUT_MS} from './lease-store.ts'

/**
 * Checks an object read from the API before the core trusts it (the fields the engine consumes); throws
 * naming the field at fault when the engine cannot use it at all. A malformed Ready entry is taken out
 * of the engine's view and passed to onProblem (or, without one, ignored: the pool reads as no Ready).
 */
export function checkedPool(kind: PoolKind, object: unknown, onProblem?: (pool: Pool, problem: Problem) => void): Pool {
  const result = validatePool(object)
  if (!result.ok) {
    const name = (object as {metadata?: {name?: string}} | undefined)?.metadata?.name ?? '?'
    throw new Error(`${kind.plural} ${name} is malformed: ${result.field} ${result.problem}`)
  }
  if (result.problem !== undefined) onProblem?.(result.pool, result.problem)
  return result.pool
}

export interface PoolStatusStoreOptions {
  /** The deadline of each request to the API server. Default 10 s, as the Lease store's. */
  requestTimeoutMs?: number
  /** Where a malformed Ready entry is reported, once per pool and problem. Default: nowhere. */
  logger?: Logger
}

/** Reports each pool's problem once, until it changes or goes away. */
function problemReporter(kind: PoolKind, logger: Logger | undefined) {
  const reported = new Map<string, string>()
  return (pool: Pool, problem: Problem | undefined) => {
    const name = pool.metadata.name
    if (problem === undefined) {
      reported.delete(name)
      return
    }
    const what = `${problem.field}: ${problem.problem}`
    if (reported.get(name) === what) return
    reported.set(name, what)
    logger?.warn({resource: kind.plural, pool: name, ...problem}, 'malformed field read as absent; the pool is kept')
  }
}

/** The path of a kind's pools (cluster-scoped), of one of them, or of one's status subresource. */
export function poolPath(kind: PoolKind, name?: string, subresource?: 'status'): string {
  const collection = `/apis/${kind.group}/${kind.version}/${kind.plural}`
  if (name === undefined) return collection
  return `${collection}/${encodeURIComponent(name)}${subresource === undefined ? '' : `/${subresource}`}`
}

export function createPoolStatusStore(kc: KubeConfig, kind: PoolKind, options: PoolStatusStoreOptions = {}): PoolStatusStore {
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const report = problemReporter(kind, options.logger)
  const checked = (object: unknown) => {
    let problem: Problem | undefined
    const pool = checkedPool(kind, object, (_, p) => (problem = p))
    report(pool, problem)
    return pool
  }
  return {
    async get(name, signal) {
      try {
        const object = await attempt({verb: 'get', resource: `${kind.name}pool ${name}`}, () => apiRequest(kc, {method: 'GET', path: poolPath(kind, name), timeoutMs, signal}))
        return checked(object)
      } catch (error) {
        if (error instanceof NotFoundError) return undefined
        throw error
      }
    },
    async writeConditions(name, resourceVersion, conditions, signal) {
      const body = {metadata: {resourceVersion}, status: {conditions}}
      const written = await attempt({verb: 'patch', resource: `${kind.name}pool/status ${name}`}, () =>
        apiRequest(kc, {method: 'PATCH', path: poolPath(kind, name, 'status'), body, contentType: MERGE_PATCH, timeoutMs, signal}),
      )
      return checked(written)
    },
  }
}
