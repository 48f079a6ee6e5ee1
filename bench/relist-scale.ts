/**
 * A periodic relist at scale (issue 18): N Leases (default 20,000) in one lease namespace of a real
 * kube-apiserver, the controller's Lease cache on them (its gap tolerance at the default 50 s grace:
 * 3 s), and a few relists asked for as the periodic one is. Prints each list's duration and pages and
 * every change of the cache's health: a relist that keeps answering page by page is no blind spell,
 * however long it takes (before issue 18 one tolerance covered the whole list, so a list longer than
 * 3 s was blindness, and every grace period restarted after it).
 *
 *   npm run bench:relist [-- --leases=20000 --relists=3]
 */
import {KubeConfig} from '@kubernetes/client-node'
import {watchGapToleranceMs} from '../src/app/kind-controller.ts'
import {POOL_KINDS} from '../src/core/pool-kinds.ts'
import {createLeaseCache} from '../src/kube/watch/caches/resource-caches.ts'
import {parseArgs, positiveInt} from './support/args.ts'
import {seedLeasesInEtcd} from './support/etcd-seed.ts'
import {pollUntil} from './support/limit.ts'
import {progress, startBenchPlane} from './support/plane.ts'
import {quietLogger} from './support/quiet.ts'
import {fmt, printTable} from './support/table.ts'

const flags = parseArgs({
  leases: {default: '20000', help: 'Leases in the namespace'},
  relists: {default: '3', help: 'relists to time after the initial list'},
})
const count = positiveInt('leases', flags.leases)
const relists = positiveInt('relists', flags.relists)
const kind = POOL_KINDS.machine
const namespace = kind.leaseNamespace
const toleranceMs = watchGapToleranceMs(50_000)

const plane = await startBenchPlane()
const stop = new AbortController()
try {
  const kc = new KubeConfig()
  kc.loadFromFile(plane.adminKubeconfig)
  const seedStart = performance.now()
  await seedLeasesInEtcd(plane, kind, Array.from({length: count}, (_, i) => `pool-${i}`))
  progress(`wrote ${fmt(count)} Leases in ${namespace} into etcd in ${fmt((performance.now() - seedStart) / 1000, 1)} s`)
  const health: string[] = []
  const lists: {reason: string; startedAt: number}[] = []
  const cache = createLeaseCache(kc, kind, {logger: quietLogger, gapToleranceMs: toleranceMs, observer: () => ({relist: (reason) => lists.push({reason, startedAt: performance.now()})})})
  cache.onHealth((whole, reason) => health.push(`${whole ? 'whole' : 'NOT WHOLE'}: ${reason}`))
  const listing = () => (cache as unknown as {listing: boolean}).listing
  const running = cache.start(stop.signal)
  await cache.waitForSync(stop.signal)
  const rows = [['list', 'Leases', 'pages', 'duration', `longer than the ${toleranceMs} ms tolerance`, 'health changes during it']]
  const initialMs = performance.now() - lists[0]!.startedAt
  rows.push(['initial', fmt(cache.size), String(Math.ceil(cache.size / 500)), `${fmt(initialMs)} ms`, initialMs > toleranceMs ? 'yes' : 'no', health.join('; ')])
  for (let i = 1; i <= relists; i++) {
    const before = health.length
    cache.requestRelist('bench: as the periodic relist')
    await pollUntil(listing, 10_000, 1)
    await pollUntil(() => !listing(), 120_000, 1)
    const ms = performance.now() - lists.at(-1)!.startedAt
    rows.push([`relist ${i} (${lists.at(-1)!.reason})`, fmt(cache.size), String(Math.ceil(cache.size / 500)), `${fmt(ms)} ms`, ms > toleranceMs ? 'yes' : 'no', health.slice(before).join('; ') || 'none'])
  }
  printTable(`relist at scale: ${fmt(count)} Leases, gap tolerance ${toleranceMs} ms (grace 50 s); load average ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')}`, rows)
  stop.abort()
  await running
} finally {
  stop.abort()
  await plane.stop()
}
