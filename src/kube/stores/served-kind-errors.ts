/**
 * What served-kind discovery (served-kinds.ts) reports when the API lacks a pool resource. Apart from
 * discovery, and free of client-node, so that the operator tools' error lines (src/cli) load at once.
 */
import type {PoolKind} from '../../core/index.ts'

export function crdName(kind: PoolKind): string {
  return `${kind.plural}.${kind.group}`
}

/** The API does not serve a pool kind's resource: its CRD (or IronCore's aggregated API) is not installed. */
export class ResourceNotServedError extends Error {
  override readonly name = 'ResourceNotServedError'
  readonly crd: string
  constructor(kind: PoolKind) {
    const crd = crdName(kind)
    super(`the API does not serve ${kind.plural} (${kind.group}/${kind.version}): is the CRD ${crd} installed? (kubectl get crd ${crd}; kubectl apply -k deploy/crds)`)
    this.crd = crd
  }
}

/** No pool kind at all is served. */
export class NoPoolKindServedError extends Error {
  override readonly name = 'NoPoolKindServedError'
  constructor(kinds: readonly PoolKind[]) {
    super(`the API serves none of the pool resources (${kinds.map(crdName).join(', ')}): are ironpool's CRDs installed? (kubectl get crd; kubectl apply -k deploy/crds)`)
  }
}
