/** Turns what one heartbeat tick did into the poollet's metrics. */
import type {TickResult, PoolKindName} from '../core/index.ts'
import type {PoolletMetrics} from './metrics.ts'

export function recordTick(metrics: PoolletMetrics, kind: PoolKindName, result: TickResult, now: number): void {
  // A probe cut short by shutdown says nothing about the runtime.
  if (result.lease.outcome !== 'skipped') {
    metrics.probeDuration.observe({kind}, result.probe.durationMs / 1000)
    if (!result.probe.ok) metrics.probeFailures.inc({kind})
  }
  if (result.lease.outcome === 'yielded') metrics.leaseYielded.set(1)
  else if (result.lease.outcome !== 'skipped' && result.lease.outcome !== 'error') metrics.leaseYielded.set(0)
  if (result.lease.outcome === 'error') metrics.leaseRenewFailures.inc()
  else if (result.lease.outcome !== 'skipped' && result.lease.outcome !== 'yielded') {
    metrics.leaseRenewDuration.observe(result.lease.durationMs / 1000)
    metrics.lastRenewTime.set(now / 1000)
  }
  if (result.ready.outcome === 'written' && result.ready.status !== undefined) metrics.readyTransitions.inc({kind, status: result.ready.status})
}
