/**
 * Which pool kinds the API serves, from discovery. `pool status` without --kind shows every kind whose
 * resource is served (a cluster may run only compute, say); a kind named with --kind must be served, or
 * the operator gets one line naming the CRD to install. Discovery also tells "CRD missing" apart from
 * "object missing", which a plain GET cannot (both are 404).
 */
import {CustomObjectsApi, type KubeConfig} from '@kubernetes/client-node'
import {NotFoundError} from '../core/errors.ts'
import type {PoolKind} from '../core/pool-kinds.ts'
import {attempt} from '../kube/api-errors.ts'
import {OperatorError, ResourceNotServedError} from './operator-errors.ts'

/** The plural resources served in one group/version; empty when the group/version is not served at all. */
async function servedResources(api: CustomObjectsApi, group: string, version: string): Promise<Set<string>> {
  try {
    const list = await attempt({verb: 'discover', resource: `${group}/${version}`}, () => api.getAPIResources({group, version}))
    return new Set(list.resources.map((r) => r.name))
  } catch (error) {
    if (error instanceof NotFoundError) return new Set()
    throw error
  }
}

/**
 * The kinds to show: `requested` when given (each must be served, else ResourceNotServedError), else
 * every kind in `all` whose resource is served (an OperatorError naming the CRDs if none is).
 */
export async function servedKinds(kc: KubeConfig, all: readonly PoolKind[], requested?: readonly PoolKind[]): Promise<PoolKind[]> {
  const api = kc.makeApiClient(CustomObjectsApi)
  const candidates = requested ?? all
  const byGroup = new Map<string, Promise<Set<string>>>()
  const served: PoolKind[] = []
  for (const kind of candidates) {
    const key = `${kind.group}/${kind.version}`
    if (!byGroup.has(key)) byGroup.set(key, servedResources(api, kind.group, kind.version))
    const resources = await byGroup.get(key)
    if (resources?.has(kind.plural)) served.push(kind)
    else if (requested !== undefined) throw new ResourceNotServedError(kind)
  }
  if (served.length === 0) {
    const crds = candidates.map((k) => `${k.plural}.${k.group}`).join(', ')
    throw new OperatorError(`the API serves none of the pool resources (${crds}): are ironpool's CRDs installed? (kubectl get crd; kubectl apply -k deploy/crds)`)
  }
  return served
}
