/**
 * The controller's opt-in CSR approver (`--approve-poollet-csrs`) as two runnables: the CSR cache, and
 * the approval, which runs on the leader only so that replicas do not decide (and report) twice; and
 * the cache's health as a /readyz check and a gauge (the IronpoolCsrApproverBlind alert), so that an
 * approver that cannot list its CSRs is seen: a poollet then neither bootstraps nor renews.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import type {Registry} from 'prom-client'
import type {Clock, EventSink, Logger} from '../core/index.ts'
import {CsrApprover} from '../kube/identity/csr-approver.ts'
import type {HealthCheck} from '../observe/healthz.ts'
import {createCsrApproverMetrics, type CacheMetrics} from '../observe/metrics.ts'
import type {Runnable} from '../runtime/runnable.ts'

export interface CsrApproval {
  runnables: Runnable[]
  /** /readyz's `csr-cache`: fails while the cache is not whole, saying whether it ever synced. */
  readyz: HealthCheck
}

export function csrApproval(o: {kubeConfig: KubeConfig; events: EventSink; logger: Logger; clock: Clock; registry: Registry; cacheMetrics: CacheMetrics}): CsrApproval {
  const metrics = createCsrApproverMetrics(o.registry)
  const resource = 'certificatesigningrequests'
  const approver = new CsrApprover({
    kubeConfig: o.kubeConfig,
    events: o.events,
    logger: o.logger,
    clock: o.clock,
    onDecision: (outcome) => metrics.decisions.inc({outcome}),
    observer: {
      relist: (reason) => o.cacheMetrics.relists.inc({resource, reason}),
      watchRestart: (reason) => o.cacheMetrics.watchRestarts.inc({resource, reason}),
    },
  })
  approver.cache.onHealth((whole) => metrics.cacheWhole.set(whole ? 1 : 0))
  const runnables: Runnable[] = [
    {name: 'certificatesigningrequests cache', start: (signal) => approver.cache.start(signal)},
    {
      name: 'poollet csr approver',
      needLeaderElection: true,
      async start(signal) {
        await approver.cache.waitForSync(signal)
        approver.setActive(true)
        await new Promise((resolve) => signal.addEventListener('abort', resolve, {once: true}))
        approver.setActive(false)
        await approver.idle()
      },
    },
  ]
  const readyz: HealthCheck = () => {
    if (!approver.cache.isWhole()) throw new Error(`certificatesigningrequests cache not whole (${approver.cache.synced ? 'a gap in its watch' : 'never synced'}): no poollet CSR is approved`)
  }
  return {runnables, readyz}
}
