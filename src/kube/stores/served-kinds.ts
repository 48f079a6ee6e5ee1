/**
 * Which pool kinds the API serves, from discovery (readable by every authenticated identity). Serves
 * the controller (`--kinds` or all served) and the operator tools alike, and tells "CRD missing" apart
 * from "object missing", which a plain GET cannot (both are 404).
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {NotFoundError, type PoolKind} from '../../core/index.ts'
import {attempt} from '../http/api-errors.ts'
import {apiRequest} from '../http/api-request.ts'
import {DEFAULT_REQUEST_TIMEOUT_MS} from './lease-store.ts'
import {NoPoolKindServedError, ResourceNotServedError} from './served-kind-errors.ts'

// The errors live apart from discovery so that the CLI's error lines load without client-node.
export {crdName, NoPoolKindServedError, ResourceNotServedError} from './served-kind-errors.ts'

/** The plural resources served in one group/version; empty when the group/version is not served at all. */
async function servedResources(kc: KubeConfig, group: string, version: string): Promise<Set<string>> {
  try {
    const list = await attempt({verb: 'discover', resource: `${group}/${version}`}, () =>
      apiRequest<{resources?: {name?: unknown}[]}>(kc, {method: 'GET', path: `/apis/${group}/${version}`, timeoutMs: DEFAULT_REQUEST_TIMEOUT_MS}),
    )
    return new Set((list.resources ?? []).map((r) => String(r.name)))
  } catch (error) {
    if (error instanceof NotFoundError) return new Set()
    throw error
  }
}

/**
 * The kinds to serve or show: `requested` when given (each must be served, else ResourceNotServedError),
 * else every kind in `all` whose resource is served (NoPoolKindServedError if none is).
 */
export async function servedKinds(kc: KubeConfig, all: readonly PoolKind[], requested?: readonly PoolKind[]): Promise<PoolKind[]> {
  const candidates = requested ?? all
  // Every group/version is asked at once: an operator tool waits one round trip, not one per group.
  const byGroup = new Map<string, Promise<Set<string>>>()
  for (const kind of candidates) {
    const key = `${kind.group}/${kind.version}`
    if (!byGroup.has(key)) byGroup.set(key, servedResources(kc, kind.group, kind.version))
  }
  // Settled before any is awaited, so that a failure of one is not left unhandled while another is read.
  await Promise.allSettled(byGroup.values())
  const served: PoolKind[] = []
  for (const kind of candidates) {
    const resources = await byGroup.get(`${kind.group}/${kind.version}`)
    if (resources?.has(kind.plural)) served.push(kind)
    else if (requested !== undefined) throw new ResourceNotServedError(kind)
  }
  if (served.length === 0) throw new NoPoolKindServedError(candidates)
  return served
}
