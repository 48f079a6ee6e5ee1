/**
 * A thousand poollets retrying against a recovering API, on real processes: the production Heartbeat
 * and LeaseRenewer of N poollets in this process, each with its own Lease and pool, talking HTTP to a
 * real kube-apiserver and etcd, at the production timings (10 s heartbeat, 40 s Lease). The fault is
 * real: kube-apiserver SIGSTOPped (a stall), or etcd filled to its space quota (NOSPACE: every write
 * refused, reads answer) and recovered as an operator does (compact, defragment, disarm). Prints the
 * poollets' requests per second in steady state, during the outage, and the worst 5 s after recovery.
 * bench:poollet-recovery is the same measurement in the simulator.
 *
 * What is not a poollet here: the runtime probe always answers (no IRI server per pool), the pools are
 * read from one shared watch (each poollet watches its own), every poollet shares the admin identity's
 * connection pool, and pooled connections are not dropped after failed renewals (they are shared).
 *
 *   npm run bench:poollet-recovery-real [-- --pools=1000 --outage=60s --fault=stall,refuse-writes]
 */
import {KubeConfig} from '@kubernetes/client-node'
import {Heartbeat} from '../src/core/heartbeat/heartbeat.ts'
import {POOL_KINDS} from '../src/core/pool-kinds.ts'
import {systemClock} from '../src/core/clock.ts'
import type {LeaseStore, PoolStatusStore} from '../src/core/ports.ts'
import {createLeaseStore} from '../src/kube/stores/lease-store.ts'
import {createPoolStatusStore} from '../src/kube/stores/pool-status-store.ts'
import {createPoolCache} from '../src/kube/watch/caches/resource-caches.ts'
import {fillEtcdToQuota, recoverFromNoSpace} from '../test/support/etcd-maintenance.ts'
import {durationMs, parseArgs, positiveInt} from './support/args.ts'
import {progress, startBenchPlane} from './support/plane.ts'
import {quietLogger} from './support/quiet.ts'
import {seedPools} from './support/seed.ts'
import {printTable} from './support/table.ts'

const flags = parseArgs({
  pools: {default: '1000', help: 'poollets'},
  outage: {default: '60s', help: 'how long each fault lasts'},
  steady: {default: '40s', help: 'steady state measured before each fault'},
  fault: {default: 'stall,refuse-writes', help: 'comma-separated: stall, refuse-writes'},
})
const pools = positiveInt('pools', flags.pools)
const outageMs = durationMs('outage', flags.outage)
const steadyMs = durationMs('steady', flags.steady)
const kind = POOL_KINDS.machine
const INTERVAL_MS = 10_000
const LEASE_MS = 40_000

/** Requests sent by the poollets, per wall-clock second. */
const perSecond = new Map<number, number>()
const count = () => {
  const s = Math.floor(Date.now() / 1000)
  perSecond.set(s, (perSecond.get(s) ?? 0) + 1)
}
/** Every call of a store is one request: counted as it is sent. */
function counted<T extends object>(store: T): T {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        count()
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
}
const rate = (fromMs: number, toMs: number) => {
  let n = 0
  for (let s = Math.floor(fromMs / 1000); s < Math.floor(toMs / 1000); s++) n += perSecond.get(s) ?? 0
  return n / ((toMs - fromMs) / 1000)
}
const hold = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const plane = await startBenchPlane({etcdArgs: [`--quota-backend-bytes=${256 * 1024 * 1024}`]})
const stop = new AbortController()
try {
  const kubeConfig = new KubeConfig()
  kubeConfig.loadFromFile(plane.adminKubeconfig)
  const names = Array.from({length: pools}, (_, i) => `recovery-${String(i).padStart(5, '0')}`)
  progress(`seeding ${pools} pools and Leases`)
  await seedPools(kubeConfig, kind, names)
  const logger = quietLogger
  const cache = createPoolCache(kubeConfig, kind, {logger})
  void cache.start(stop.signal)
  await cache.waitForSync(stop.signal)
  const requestTimeoutMs = Math.min(INTERVAL_MS, LEASE_MS)
  const leases: LeaseStore = counted(createLeaseStore(kubeConfig, kind.leaseNamespace, {requestTimeoutMs}))
  const poolStore: PoolStatusStore = counted(createPoolStatusStore(kubeConfig, kind, {requestTimeoutMs, logger}))
  progress(`starting ${pools} heartbeats (interval ${INTERVAL_MS / 1000} s, Lease ${LEASE_MS / 1000} s)`)
  const runs = names.map((name, i) => {
    const heartbeat = new Heartbeat({
      kind,
      poolName: name,
      holderIdentity: `${name}_bench`,
      probe: {probe: () => Promise.resolve()},
      leases,
      pools: poolStore,
      getPool: () => (cache.isWhole() ? cache.get(name) : undefined),
      clock: systemClock,
      logger,
      intervalMs: INTERVAL_MS,
      leaseDurationMs: LEASE_MS,
    })
    // Poollets start at random times: spread over one interval.
    return hold((i * INTERVAL_MS) / pools).then(() => heartbeat.run(stop.signal))
  })
  await hold(INTERVAL_MS + 5_000)
  const rows = [['fault', 'steady req/s', 'outage req/s', 'peak 5 s after recovery (req/s)', 'first 30 s after (req/s)', 'x steady']]
  for (const fault of flags.fault.split(',')) {
    const steadyFrom = Date.now()
    await hold(steadyMs)
    const start = Date.now()
    progress(`${fault} for ${outageMs / 1000} s`)
    if (fault === 'stall') plane.pauseApiServer()
    else if (fault === 'refuse-writes') progress(`etcd filled with ${await fillEtcdToQuota(plane.etcdUrl, 4_000)} MiB to reach its quota`)
    else throw new Error(`--fault: ${fault} is not a fault; valid: stall, refuse-writes`)
    await hold(outageMs)
    if (fault === 'stall') plane.resumeApiServer()
    else await recoverFromNoSpace(plane.etcdUrl)
    const end = Date.now()
    progress('recovered; measuring the minute after')
    await hold(60_000)
    const steady = rate(steadyFrom, start)
    let peak = 0
    for (let t = end; t < end + 55_000; t += 5_000) peak = Math.max(peak, rate(t, t + 5_000))
    rows.push([fault, steady.toFixed(0), rate(start + 10_000, end).toFixed(0), peak.toFixed(0), rate(end, end + 30_000).toFixed(0), (peak / steady).toFixed(2)])
  }
  printTable(`${pools} poollets (the production Heartbeat and LeaseRenewer, in one process) against a real kube-apiserver failing for ${outageMs / 1000} s, then recovering (heartbeat 10 s, Lease 40 s)`, rows)
  stop.abort()
  await Promise.allSettled(runs)
} finally {
  stop.abort()
  plane.resumeApiServer()
  await plane.stop()
}
