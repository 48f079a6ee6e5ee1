/**
 * The controller against a real control plane (issue 4, figure 2). N pools whose Leases the bench
 * renews every --renew-interval; the real `ironpool controller` as its own ServiceAccount in a
 * separate process; a steady window with nothing stopped; then 5% of the Leases stopped. Prints the
 * controller's CPU share and RSS, the delay from each stopped pool's deadline to its Unknown, false
 * Unknowns and pool writes in steady state. Everything started here is stopped in `finally`.
 */
import {KubeConfig} from '@kubernetes/client-node'
import {availableParallelism, loadavg} from 'node:os'
import type {ControlPlane} from '../src/controlplane/control-plane.ts'
import {formatDuration} from '../src/core/durations.ts'
import {POOL_KINDS} from '../src/core/pool-kinds.ts'
import {durationMs, nodeFlagsArg, nodeFlagsSpec, oneOf, parseArgs, positiveInt} from './support/args.ts'
import {ControllerProcess} from './support/controller-process.ts'
import {LeaseLoad} from './support/lease-load.ts'
import {delay, pollUntil} from './support/limit.ts'
import {startBenchPlane, progress} from './support/plane.ts'
import {PoolWatch} from './support/pool-watch.ts'
import {sampleProc, type ProcSample} from './support/proc.ts'
import {total} from './support/prom-text.ts'
import {seedPoolsInEtcd} from './support/etcd-seed.ts'
import {seedPools} from './support/seed.ts'
import {report, type Phase} from './support/e2e-report.ts'
import {fmt} from './support/table.ts'
import {ensureBuilt} from '../test/support/cli.ts'

const flags = parseArgs({
  pools: {default: '1000', help: 'machine pools (and Leases)'},
  'renew-interval': {default: '10s', help: 'each Lease is renewed this often'},
  'grace-period': {default: '50s', help: "the controller's --grace-period"},
  steady: {default: '60s', help: 'the steady window (nothing stopped) over which CPU and pool writes are measured'},
  'stop-percent': {default: '5', help: 'share of pools whose Leases stop being renewed'},
  concurrency: {default: '16', help: 'renewals in flight at most'},
  seed: {default: 'etcd', help: "how the pools and Leases are created: 'etcd' (written into etcd as kube-apiserver stores them: seconds) or 'api' (three requests a pool through kube-apiserver: 85 s for 30,000 here)"},
  'node-flags': nodeFlagsSpec("the controller's"),
})
const nodeFlags = nodeFlagsArg(flags['node-flags'])
const seedVia = oneOf('seed', flags.seed, ['etcd', 'api'])
const kind = POOL_KINDS.machine
const n = positiveInt('pools', flags.pools)
const renewMs = durationMs('renew-interval', flags['renew-interval'])
const graceMs = durationMs('grace-period', flags['grace-period'])
const steadyMs = durationMs('steady', flags.steady)
const stopCount = Math.max(1, Math.round((n * positiveInt('stop-percent', flags['stop-percent'])) / 100))
const names = Array.from({length: n}, (_, i) => `bench-${String(i).padStart(6, '0')}`)
// Every k-th pool, so the stopped ones are spread over the renewal phases.
const stopped = names.filter((_, i) => i % Math.floor(n / stopCount) === 0).slice(0, stopCount)

let plane: ControlPlane | undefined
let controller: ControllerProcess | undefined
let load: LeaseLoad | undefined
let watch: PoolWatch | undefined
try {
  // Compiling dist/ is synchronous: done before the load generator runs, so it cannot stall it.
  ensureBuilt()
  progress(`control plane; ${n} pools, renew every ${formatDuration(renewMs)}, grace ${formatDuration(graceMs)}`)
  plane = await startBenchPlane()
  const admin = new KubeConfig()
  admin.loadFromFile(plane.adminKubeconfig)
  const seedStart = performance.now()
  if (seedVia === 'etcd') await seedPoolsInEtcd(plane, kind, names)
  else await seedPools(admin, kind, names)
  progress(`seeded ${n} pools and their Leases through ${seedVia === 'etcd' ? 'etcd' : 'kube-apiserver'} in ${fmt((performance.now() - seedStart) / 1000, 1)} s`)
  load = new LeaseLoad({kubeConfig: admin, namespace: kind.leaseNamespace, names, intervalMs: renewMs, concurrency: positiveInt('concurrency', flags.concurrency)})
  load.start()
  watch = new PoolWatch(admin, kind)
  await watch.start()

  progress('controller (as its ServiceAccount)')
  const identity = await plane.serviceAccountIdentity('ironpool-system', 'ironpool-controller')
  controller = new ControllerProcess([`--kubeconfig=${identity.kubeconfig}`, `--grace-period=${formatDuration(graceMs)}`], nodeFlags)
  await controller.ready()
  const pid = controller.pid
  const planePids = plane.pids
  const sampleAll = () => ({controller: sampleProc(pid), apiserver: sampleProc(planePids[1]!), etcd: sampleProc(planePids[0]!), bench: benchSample()})

  // Warm-up: the start-up list and one full round of renewals are behind us, and the generator has
  // caught up with any backlog from set-up, before measuring.
  await delay(Math.max(renewMs * 2, 5_000))
  if (!(await pollUntil(() => load!.backlog() < 2 * positiveInt('concurrency', flags.concurrency), 10 * renewMs))) {
    throw new Error(`the load generator cannot keep up: ${load.backlog()} renewals overdue; try fewer --pools or a longer --renew-interval`)
  }
  progress(`steady window, ${formatDuration(steadyMs)}`)
  load.resetLag()
  const load0 = loadavg()[0]!
  const steady0 = {procs: sampleAll(), modified: watch.modified, marked: total(await controller.metrics(), 'ironpool_controller_pools_marked_unknown_total')}
  await delay(steadyMs)
  const steady1 = {procs: sampleAll(), modified: watch.modified, marked: total(await controller.metrics(), 'ironpool_controller_pools_marked_unknown_total')}

  progress(`stopping ${stopped.length} Leases`)
  load.stop(stopped)
  const stopped0 = sampleAll()
  const timeoutMs = graceMs + renewMs + 30_000
  const all = await pollUntil(() => stopped.every((name) => watch!.unknownAt.has(name)), timeoutMs)
  // One more renewal round: a late false Unknown would show up here.
  await delay(renewMs)
  const stopped1 = sampleAll()
  const metrics = await controller.metrics()
  // Others may share the machine: its load average says how much the CPU figures can be trusted.
  const machine = `load average ${fmt(load0, 2)} → ${fmt(loadavg()[0]!, 2)} on ${availableParallelism()} cores`

  const steadyPhase: Phase = {name: 'steady (nothing stopped)', from: steady0.procs, to: steady1.procs}
  const stopPhase: Phase = {name: `${stopped.length} stopped → marked`, from: stopped0, to: stopped1}
  report({
    run: `${n} pools, renew ${formatDuration(renewMs)}, grace ${formatDuration(graceMs)}, steady ${formatDuration(steadyMs)}, ${stopped.length} stopped; ${load.renewals} renewals, ${load.failures} failed, worst renewal start lag while measuring ${fmt(load.maxLagMs)} ms; ${machine}`,
    phases: [steadyPhase, stopPhase],
    steadyPoolWrites: steady1.modified - steady0.modified,
    steadyMarked: steady1.marked - steady0.marked,
    stopped,
    allMarked: all,
    watchUnknownAt: watch.unknownAt,
    lastAck: load.lastAck,
    graceMs,
    maxGapMs: load.worstGap(),
    controllerMarks: controller.marks(),
    metrics,
  })
  // Anything the controller warned about explains odd delays (a watch restart restarts every grace period).
  const warnings = new Map<string, number>()
  for (const line of controller.cli.logs()) {
    if (Number(line.level) >= 40 || line.msg === 'relisting' || String(line.msg).includes('watch')) {
      const key = `${String(line.level)} ${String(line.msg)} ${JSON.stringify(line.resource ?? '')}`
      warnings.set(key, (warnings.get(key) ?? 0) + 1)
    }
  }
  for (const sample of metrics.filter((m) => m.name.startsWith('ironpool_cache_') && m.value > 0)) {
    warnings.set(`metric ${sample.name} ${JSON.stringify(sample.labels)}`, sample.value)
  }
  process.stdout.write(`\nController log lines about watches, and warnings (level msg resource: count):\n${[...warnings].map(([k, v]) => `  ${k}: ${v}`).join('\n') || '  none'}\n`)
} finally {
  progress('stopping everything')
  watch?.close()
  await load?.close()
  await controller?.stop()
  await plane?.stop()
}

function benchSample(): ProcSample {
  const usage = process.cpuUsage()
  const memory = process.memoryUsage()
  return {at: performance.now(), cpuMs: (usage.user + usage.system) / 1000, rssBytes: memory.rss, hwmBytes: memory.rss}
}
