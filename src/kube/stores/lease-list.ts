/**
 * Every Lease of one namespace, fresh: the consistent LIST with which the engine confirms many due
 * pools at once (confirm-batcher.ts). No resourceVersion, so it is a quorum read, as fresh as a GET;
 * pages of 500 with continue tokens are one snapshot (the first page's resourceVersion). The whole
 * exchange is bounded by one deadline, shared by the pages, so a slow list is a failed confirmation,
 * not a hang.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import type {Lease} from '../../core/index.ts'
import {attempt} from '../http/api-errors.ts'
import {apiRequest} from '../http/api-request.ts'
import {leasePath, toLease, type ServedLease} from './lease-store.ts'

const PAGE = 500

interface LeaseListPage {
  metadata?: {continue?: string}
  items?: ServedLease[]
}

export function createLeaseList(kc: KubeConfig, namespace: string, timeoutMs: number): (signal: AbortSignal) => Promise<Lease[]> {
  return async (signal) => {
    const deadline = performance.now() + timeoutMs
    const leases: Lease[] = []
    let token: string | undefined
    do {
      const left = Math.max(1, deadline - performance.now())
      const page = await attempt({verb: 'list', resource: `leases ${namespace}`}, () =>
        apiRequest<LeaseListPage>(kc, {method: 'GET', path: leasePath(namespace), query: {limit: PAGE, continue: token}, timeoutMs: left, signal}),
      )
      for (const item of page.items ?? []) leases.push(toLease({...item, metadata: {...item.metadata, namespace}}))
      token = page.metadata?.continue || undefined
    } while (token !== undefined)
    return leases
  }
}
