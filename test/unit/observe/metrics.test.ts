import {expect} from 'chai'
import {register as globalRegistry} from 'prom-client'
import {createRequire} from 'node:module'
import type * as PerfHooks from 'node:perf_hooks'
import {createControllerMetrics, createPoolletMetrics, createRegistry, poolletEventLoopPrecisionMs} from '../../../src/observe/metrics.ts'

describe('metrics', () => {
  it('each registry is fresh: two poollets in one process register without collision, the global registry stays empty', async () => {
    const a = createRegistry()
    const b = createRegistry()
    createPoolletMetrics(a, 'machine').probeFailures.inc({kind: 'machine'})
    createPoolletMetrics(b, 'volume')
    expect(await a.metrics()).to.include('ironpool_poollet_probe_failures_total{kind="machine"} 1')
    expect(await b.metrics()).to.include('ironpool_poollet_probe_failures_total{kind="volume"} 0')
    expect(await globalRegistry.metrics()).not.to.include('ironpool_')
  })

  it('a registry carries the default process metrics', async () => {
    const text = await createRegistry().metrics()
    expect(text).to.include('process_cpu_user_seconds_total').and.include('nodejs_eventloop_lag_seconds')
  })

  it('its event-loop-delay monitor wakes once a second (a poollet’s once a heartbeat), not every 10 ms (prom-client’s default: ~4 ms of CPU a second in an idle process)', () => {
    // prom-client reads monitorEventLoopDelay off the CommonJS module object when it starts collecting.
    const perfHooks = createRequire(import.meta.url)('node:perf_hooks') as typeof PerfHooks
    const original = perfHooks.monitorEventLoopDelay
    const resolutions: (number | undefined)[] = []
    perfHooks.monitorEventLoopDelay = (options) => {
      resolutions.push(options?.resolution)
      return original(options)
    }
    try {
      createRegistry()
      createRegistry({eventLoopMonitoringPrecisionMs: poolletEventLoopPrecisionMs(10_000)})
      createRegistry({eventLoopMonitoringPrecisionMs: poolletEventLoopPrecisionMs(200)})
    } finally {
      perfHooks.monitorEventLoopDelay = original
    }
    // The controller's once a second; a poollet's once a heartbeat, never more often than once a second.
    expect(resolutions).to.deep.equal([1000, 10_000, 1000])
  })

  it('the poollet group starts its series at zero', async () => {
    const registry = createRegistry()
    createPoolletMetrics(registry, 'bucket')
    const text = await registry.metrics()
    for (const series of [
      'ironpool_poollet_probe_failures_total{kind="bucket"} 0',
      'ironpool_poollet_probe_duration_seconds_count{kind="bucket"} 0',
      'ironpool_poollet_lease_renew_failures_total 0',
      'ironpool_poollet_ready_transitions_total{kind="bucket",status="True"} 0',
      'ironpool_poollet_ready_transitions_total{kind="bucket",status="Unknown"} 0',
    ]) {
      expect(text).to.include(series)
    }
    expect(text).to.include('# TYPE ironpool_poollet_last_successful_renew_timestamp_seconds gauge')
    expect(text).not.to.include('ironpool_controller_')
  })

  it('the poollet handles record what they are told', async () => {
    const registry = createRegistry()
    const metrics = createPoolletMetrics(registry, 'machine')
    metrics.leaseRenewDuration.observe(0.02)
    metrics.readyTransitions.inc({kind: 'machine', status: 'False'})
    metrics.lastRenewTime.set(1_700_000_000)
    const text = await registry.metrics()
    expect(text).to.include('ironpool_poollet_lease_renew_duration_seconds_bucket{le="0.025"} 1')
    expect(text).to.include('ironpool_poollet_ready_transitions_total{kind="machine",status="False"} 1')
    expect(text).to.include('ironpool_poollet_last_successful_renew_timestamp_seconds 1700000000')
  })

  it('the poollet exports its client certificate\'s end as read at each scrape, none without one; rotation failures start at zero', async () => {
    const without = createRegistry()
    createPoolletMetrics(without, 'machine')
    const plain = await without.metrics()
    expect(plain).to.include('ironpool_poollet_certificate_rotation_failures_total 0')
    expect(plain).to.not.include('ironpool_poollet_certificate_expiration_timestamp_seconds')
    const registry = createRegistry()
    let notAfter: number | undefined = 1_800_000_000_500
    const metrics = createPoolletMetrics(registry, 'machine', {certificateNotAfter: () => notAfter})
    expect(await registry.metrics()).to.include('ironpool_poollet_certificate_expiration_timestamp_seconds 1800000000.5')
    notAfter = 1_900_000_000_000
    metrics.certificateRotationFailures.inc()
    const text = await registry.metrics()
    expect(text).to.include('ironpool_poollet_certificate_expiration_timestamp_seconds 1900000000').and.include('ironpool_poollet_certificate_rotation_failures_total 1')
    notAfter = undefined
    expect(await registry.metrics(), 'unreadable at a scrape: the last value').to.include('ironpool_poollet_certificate_expiration_timestamp_seconds 1900000000')
  })

  it('no default metric is a gauge named like a counter (promtool check metrics)', async () => {
    const text = await createRegistry().metrics()
    expect(text).to.not.match(/^nodejs_active_\w+_total/m)
    expect(text).to.include('# TYPE nodejs_active_handles gauge')
  })

  it('the controller group starts per-kind series at zero, and carries the cache counters', async () => {
    const registry = createRegistry()
    const metrics = createControllerMetrics(registry, ['machine', 'volume'])
    metrics.cache.relists.inc({resource: 'leases', reason: 'gone'})
    const text = await registry.metrics()
    for (const series of [
      'ironpool_controller_pools{kind="machine",status="True"} 0',
      'ironpool_controller_pools{kind="volume",status="None"} 0',
      'ironpool_controller_pools_marked_unknown_total{kind="volume"} 0',
      'ironpool_controller_breaker_open{kind="machine"} 0',
      'ironpool_controller_leader 0',
      'ironpool_controller_lease_events_total 0',
      'ironpool_cache_relists_total{resource="leases",reason="gone"} 1',
      '# TYPE ironpool_cache_watch_restarts_total counter',
    ]) {
      expect(text).to.include(series)
    }
    expect(text).not.to.include('ironpool_poollet_')
  })

  it('the overdue gauges read each kind’s source at scrape; the write failures start at zero', async () => {
    const registry = createRegistry()
    const metrics = createControllerMetrics(registry, ['machine', 'volume'])
    let stats = {pools: 3, oldestMs: 12_500}
    metrics.watchOverdue('machine', () => stats)
    let text = await registry.metrics()
    expect(text).to.include('ironpool_controller_pools_overdue{kind="machine"} 3')
    expect(text).to.include('ironpool_controller_oldest_overdue_seconds{kind="machine"} 12.5')
    expect(text).to.include('ironpool_controller_pools_overdue{kind="volume"} 0')
    expect(text).to.include('ironpool_controller_unknown_write_failures_total{kind="volume"} 0')
    stats = {pools: 0, oldestMs: 0}
    text = await registry.metrics()
    expect(text).to.include('ironpool_controller_pools_overdue{kind="machine"} 0')
    expect(text).to.include('ironpool_controller_oldest_overdue_seconds{kind="machine"} 0')
  })

  it('the Unknown write delay histogram resolves sub-second delays and seconds', async () => {
    const registry = createRegistry()
    const metrics = createControllerMetrics(registry, ['machine'])
    metrics.unknownWriteDelay.observe(0.3)
    metrics.unknownWriteDelay.observe(3)
    const text = await registry.metrics()
    expect(text).to.include('ironpool_controller_unknown_write_delay_seconds_bucket{le="0.25"} 0')
    expect(text).to.include('ironpool_controller_unknown_write_delay_seconds_bucket{le="0.5"} 1')
    expect(text).to.include('ironpool_controller_unknown_write_delay_seconds_bucket{le="1"} 1')
    expect(text).to.include('ironpool_controller_unknown_write_delay_seconds_bucket{le="5"} 2')
  })
})
