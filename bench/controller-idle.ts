/**
 * An idle controller (issue 21): its CPU time per second and resident memory while nothing happens,
 * that is, what its own timers cost (the Lease and pool watches, the API probe, leader election, the
 * metrics' collectors). The real `ironpool controller` runs as its ServiceAccount against a real
 * control plane with a few pools whose Leases the bench renews at the default 10 s interval, so the
 * controller sees the steady trickle of Lease events a healthy fleet sends and never marks a pool.
 *
 * CPU is read from /proc (resolution 10 ms), over a window long enough that this is well under a
 * percent of the figure. The machine is shared: repeat a run before trusting a difference.
 */
import {KubeConfig} from '@kubernetes/client-node'
import {availableParallelism, loadavg} from 'node:os'
import type {ControlPlane} from '../src/controlplane/control-plane.ts'
import {formatDuration} from '../src/core/durations.ts'
import {POOL_KINDS} from '../src/core/pool-kinds.ts'
import {ensureBuilt} from '../test/support/cli.ts'
import {durationMs, nodeFlagsArg, nodeFlagsSpec, parseArgs, positiveInt} from './support/args.ts'
import {ControllerProcess} from './support/controller-process.ts'
import {LeaseLoad} from './support/lease-load.ts'
import {delay} from './support/limit.ts'
import {progress, startBenchPlane} from './support/plane.ts'
import {MiB, sampleProc} from './support/proc.ts'
import {seedPools} from './support/seed.ts'
import {fmt, printTable} from './support/table.ts'

const flags = parseArgs({
  pools: {default: '3', help: 'machine pools, their Leases renewed by the bench'},
  'renew-interval': {default: '10s', help: 'how often the bench renews each Lease (the poollet default)'},
  window: {default: '120s', help: 'the measured window, after the warm-up'},
  warmup: {default: '20s', help: 'after /readyz, before measuring'},
  'node-flags': nodeFlagsSpec("the controller's"),
})
const kind = POOL_KINDS.machine
const n = positiveInt('pools', flags.pools)
const renewMs = durationMs('renew-interval', flags['renew-interval'])
const windowMs = durationMs('window', flags.window)
const warmupMs = durationMs('warmup', flags.warmup)
const nodeFlags = nodeFlagsArg(flags['node-flags'])
const names = Array.from({length: n}, (_, i) => `idle-${i}`)

let plane: ControlPlane | undefined
let controller: ControllerProcess | undefined
let load: LeaseLoad | undefined
try {
  ensureBuilt()
  progress(`control plane; ${n} pools, renewed every ${formatDuration(renewMs)}`)
  plane = await startBenchPlane()
  const admin = new KubeConfig()
  admin.loadFromFile(plane.adminKubeconfig)
  await seedPools(admin, kind, names)
  load = new LeaseLoad({kubeConfig: admin, namespace: kind.leaseNamespace, names, intervalMs: renewMs, concurrency: 1})
  load.start()
  progress('controller (as its ServiceAccount), defaults otherwise')
  const identity = await plane.serviceAccountIdentity('ironpool-system', 'ironpool-controller')
  controller = new ControllerProcess([`--kubeconfig=${identity.kubeconfig}`, '--kinds=machine'], nodeFlags)
  await controller.ready()
  await delay(warmupMs)
  const from = sampleProc(controller.pid)
  progress(`measuring for ${formatDuration(windowMs)}`)
  await delay(windowMs)
  const to = sampleProc(controller.pid)
  const cpuMs = to.cpuMs - from.cpuMs
  const seconds = (to.at - from.at) / 1000
  const errors = controller.cli.logs().filter((l) => Number(l.level) >= 50).length
  process.stdout.write(`\nRun: ${n} machine pools renewed every ${formatDuration(renewMs)}, window ${fmt(seconds, 0)} s after ${formatDuration(warmupMs)}; load average ${fmt(loadavg()[0]!, 2)} on ${availableParallelism()} cores; ${errors} error log lines\n`)
  printTable('Idle controller', [
    ['figure', 'value'],
    ['CPU time per second, ms (all threads, scheduler ns / window)', fmt(cpuMs / seconds, 2)],
    ['CPU time per 10 s (a poollet tick at the default interval), ms', fmt((10 * cpuMs) / seconds, 1)],
    ['resident memory (VmRSS), MiB', fmt(to.rssBytes / MiB, 1)],
    ['peak resident memory (VmHWM), MiB', fmt(to.hwmBytes / MiB, 1)],
  ])
} finally {
  progress('stopping everything')
  await load?.close()
  await controller?.stop()
  await plane?.stop()
}
