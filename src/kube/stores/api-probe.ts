/**
 * The controller's proof that the API server and its storage answer: a quorum read that is as cheap as
 * a read can be. A list with limit=1 and no resourceVersion must be served consistently (from etcd, or
 * from the watch cache once etcd confirmed its progress), so it fails or hangs when etcd does, unlike
 * a read the API server could answer from memory. Its namespace holds a kind's Leases, which the
 * controller may list anyway: no extra RBAC.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {attempt} from '../http/api-errors.ts'
import {apiRequest} from '../http/api-request.ts'
import {leasePath} from './lease-store.ts'

export type ApiProbe = (signal: AbortSignal) => Promise<void>

export function createApiProbe(kc: KubeConfig, namespace: string, timeoutMs: number): ApiProbe {
  return async (signal) => {
    await attempt({verb: 'list', resource: `leases ${namespace} (the controller's API probe)`}, () =>
      apiRequest(kc, {method: 'GET', path: leasePath(namespace), query: {limit: 1}, timeoutMs, signal}),
    )
  }
}
