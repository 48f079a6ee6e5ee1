/**
 * The controller's opt-in CSR approver (`--approve-poollet-csrs`) as two runnables: the CSR cache, and
 * the approval, which runs on the leader only so that replicas do not decide (and report) twice.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import type {Clock, EventSink, Logger} from '../core/index.ts'
import {CsrApprover} from '../kube/identity/csr-approver.ts'
import type {Runnable} from '../runtime/runnable.ts'

export function csrApprovalRunnables(kubeConfig: KubeConfig, events: EventSink, logger: Logger, clock: Clock): Runnable[] {
  const approver = new CsrApprover({kubeConfig, events, logger, clock})
  return [
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
}
