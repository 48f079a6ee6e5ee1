/**
 * Which pool kinds the API serves: a list of at most one object per kind (which also proves the
 * identity may list them). A 404 means the resource is not served: its CRD (or IronCore's aggregated
 * API) is missing.
 */
import {CustomObjectsApi, type KubeConfig} from '@kubernetes/client-node'
import {NotFoundError} from '../core/errors.ts'
import type {PoolKind} from '../core/pool-kinds.ts'
import {attempt} from './api-errors.ts'

export function crdName(kind: PoolKind): string {
  return `${kind.plural}.${kind.group}`
}

export async function isServed(kc: KubeConfig, kind: PoolKind): Promise<boolean> {
  const api = kc.makeApiClient(CustomObjectsApi)
  try {
    await attempt({verb: 'list', resource: kind.plural}, () =>
      api.listClusterCustomObject({group: kind.group, version: kind.version, plural: kind.plural, limit: 1}),
    )
    return true
  } catch (error) {
    if (error instanceof NotFoundError) return false
    throw error
  }
}

/**
 * The kinds to serve: the named ones, each of which must be served (else an error naming its CRD),
 * or every served kind when none is named (else an error naming all the CRDs looked for).
 */
export async function resolveServedKinds(kc: KubeConfig, all: readonly PoolKind[], named: readonly PoolKind[] | undefined): Promise<PoolKind[]> {
  const candidates = named ?? all
  const served = await Promise.all(candidates.map(async (kind) => ({kind, served: await isServed(kc, kind)})))
  const missing = served.filter((s) => !s.served).map((s) => s.kind)
  if (named !== undefined && missing.length > 0) {
    throw new Error(
      `the API does not serve ${missing.map((k) => `${k.group}/${k.version} ${k.plural}`).join(', ')}: install the CRD ${missing.map(crdName).join(', ')} (deploy/crds)`,
    )
  }
  const kinds = served.filter((s) => s.served).map((s) => s.kind)
  if (kinds.length === 0) throw new Error(`the API serves no pool kind: install the CRDs ${all.map(crdName).join(', ')} (deploy/crds)`)
  return kinds
}
