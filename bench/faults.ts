/**
 * The fault scenarios of test/integration/faults at a few hundred pools (issue 9's figures). N pools
 * whose Leases the bench renews (bench/support/lease-load.ts), the real `ironpool controller` as its
 * ServiceAccount, talking to the API through the test proxy (TLS terminated, so that one Lease watch can
 * be ended and its reopening stalled). Before each fault a few more Leases stop being renewed: the
 * frozen pools, which must be marked once the view is whole again; every other pool is live and must
 * never be Unknown. Prints, per scenario: false Unknowns, frozen pools marked, the delay from the end of
 * the fault to each mark (p50, max), the controller's CPU; and the API requests per second that the
 * guards cost in steady state, from kube-apiserver's audit log of the controller's user. Asserts nothing.
 */
import {KubeConfig} from '@kubernetes/client-node'
import {mkdtemp, rm} from 'node:fs/promises'
import {availableParallelism, loadavg, tmpdir} from 'node:os'
import path from 'node:path'
import type {ControlPlane} from '../src/controlplane/control-plane.ts'
import {formatDuration} from '../src/core/durations.ts'
import {POOL_KINDS} from '../src/core/pool-kinds.ts'
import {ensureBuilt} from '../test/support/cli.ts'
import {proxyKubeconfig, type ProxiedKubeconfig} from '../test/support/tcp-proxy.ts'
import {durationMs, parseArgs, positiveInt} from './support/args.ts'
import {auditOneUser, requestsBetween} from './support/audit.ts'
import {ControllerProcess} from './support/controller-process.ts'
import {LeaseLoad} from './support/lease-load.ts'
import {delay, pollUntil} from './support/limit.ts'
import {progress, startBenchPlane} from './support/plane.ts'
import {cpuShare, sampleProc} from './support/proc.ts'
import {seedPools} from './support/seed.ts'
import {UnknownPoll} from './support/unknown-poll.ts'
import {percentile} from './support/stats.ts'
import {fmt, printTable} from './support/table.ts'

const flags = parseArgs({
  pools: {default: '300', help: 'machine pools (and Leases)'},
  'renew-interval': {default: '2s', help: 'each live Lease is renewed this often'},
  'grace-period': {default: '8s', help: "the controller's --grace-period; each fault lasts twice as long"},
  frozen: {default: '3', help: 'Leases that stop being renewed just before each fault'},
  steady: {default: '20s', help: 'the window without faults over which the guards\' requests are counted'},
  concurrency: {default: '16', help: 'renewals in flight at most'},
})
const kind = POOL_KINDS.machine
const n = positiveInt('pools', flags.pools)
const renewMs = durationMs('renew-interval', flags['renew-interval'])
const graceMs = durationMs('grace-period', flags['grace-period'])
const frozenPerFault = positiveInt('frozen', flags.frozen)
const steadyMs = durationMs('steady', flags.steady)
const names = Array.from({length: n}, (_, i) => `bench-${String(i).padStart(6, '0')}`)
const CONTROLLER_USER = 'system:serviceaccount:ironpool-system:ironpool-controller'
const LEASE_WATCH = new RegExp(`^GET /apis/coordination\\.k8s\\.io/v1/namespaces/${kind.leaseNamespace}/leases\\?.*watch=true`)
const LEASE_WATCH_OR_LIST = new RegExp(`^GET /apis/coordination\\.k8s\\.io/v1/namespaces/${kind.leaseNamespace}/leases\\?(.*watch=true|.*limit=500)`)

interface Scenario {
  name: string
  start(): void | Promise<void>
  /** Resolves when the fault is over (a restarted component answers again). */
  end(): void | Promise<void>
}

let plane: ControlPlane | undefined
let controller: ControllerProcess | undefined
let load: LeaseLoad | undefined
let watch: UnknownPoll | undefined
let proxied: ProxiedKubeconfig | undefined
const auditDir = await mkdtemp(path.join(tmpdir(), 'ironpool-bench-faults-'))
try {
  ensureBuilt()
  progress(`control plane; ${n} pools, renew every ${formatDuration(renewMs)}, grace ${formatDuration(graceMs)}`)
  const audit = await auditOneUser(auditDir, CONTROLLER_USER)
  plane = await startBenchPlane({apiServerArgs: audit.apiServerArgs})
  const admin = new KubeConfig()
  admin.loadFromFile(plane.adminKubeconfig)
  await seedPools(admin, kind, names)
  load = new LeaseLoad({kubeConfig: admin, namespace: kind.leaseNamespace, names, intervalMs: renewMs, concurrency: positiveInt('concurrency', flags.concurrency)})
  load.start()
  watch = new UnknownPoll(admin, kind)

  progress('controller (as its ServiceAccount, through the proxy)')
  const identity = await plane.serviceAccountIdentity('ironpool-system', 'ironpool-controller')
  proxied = await proxyKubeconfig(identity.kubeconfig, path.join(auditDir, 'controller.kubeconfig'), {terminateTls: true})
  const proxy = proxied.proxy
  controller = new ControllerProcess([`--kubeconfig=${proxied.kubeconfig}`, `--grace-period=${formatDuration(graceMs)}`, '--kinds=machine'])
  await controller.ready()
  const ctl = controller
  const p = plane
  await delay(Math.max(2 * renewMs, 5_000))

  progress(`steady window, ${formatDuration(steadyMs)}: the controller's requests`)
  const steadyFrom = Date.now()
  await delay(steadyMs)
  const steadyTo = Date.now()
  // The audit log is written as requests complete (blocking mode): a short wait lets the last ones in.
  await delay(1_000)
  const counts = requestsBetween(audit.logFile, steadyFrom, steadyTo)
  const seconds = (steadyTo - steadyFrom) / 1000
  const perSecond = (key: string) => (counts.get(key) ?? 0) / seconds
  printTable(`The controller's API requests in steady state (${fmt(seconds, 1)} s, from the audit log; a watch counts once when it opens)`, [
    ['request', 'count', 'per second'],
    ...[...counts].sort((a, b) => b[1] - a[1]).map(([key, count]) => [key, fmt(count), fmt(count / seconds, 2)]),
  ])
  process.stdout.write(
    `guards: the sight's quorum read (list leases, limit=1) ${fmt(perSecond('list leases'), 2)}/s and the confirming reads (get leases) ${fmt(perSecond('get leases'), 2)}/s, ` +
      `${fmt(perSecond('list leases') + perSecond('get leases'), 2)} requests/s in all (a relist would count as list leases too; none is expected in steady state)\n`,
  )

  const child = () => ctl.cli.child
  const scenarios: Scenario[] = [
    {name: 'controller paused (SIGSTOP)', start: () => void child().kill('SIGSTOP'), end: () => void child().kill('SIGCONT')},
    {name: 'kube-apiserver paused', start: () => p.pauseApiServer(), end: () => p.resumeApiServer()},
    {name: 'etcd paused', start: () => p.pauseEtcd(), end: () => p.resumeEtcd()},
    {name: 'kube-apiserver killed, restarted', start: () => p.stopApiServer('SIGKILL'), end: () => p.startApiServer()},
    {name: 'etcd killed, restarted', start: () => p.stopEtcd('SIGKILL'), end: () => p.startEtcd()},
    {name: "controller's connection stalled", start: () => proxy.stall(), end: () => proxy.heal()},
    {
      name: 'Lease watch ended, reopen hangs',
      start: () => {
        proxy.stallRequests(LEASE_WATCH_OR_LIST)
        proxy.endResponses(LEASE_WATCH)
      },
      end: () => proxy.heal(),
    },
  ]
  const rows: string[][] = [['scenario', 'false Unknowns', 'frozen marked', 'end → mark p50 ms', 'max ms', 'controller CPU %', 'blind spells (reason)']]
  const frozen = new Set<string>()
  let next = 0
  for (const scenario of scenarios) {
    // Spread over the renewal phases: every k-th live pool.
    const step = Math.floor(n / (frozenPerFault * scenarios.length + 1))
    const these = Array.from({length: frozenPerFault}, () => names[(++next * step) % n]!)
    progress(`${scenario.name}: ${these.length} Leases stop, then the fault for ${formatDuration(2 * graceMs)}`)
    for (const name of these) frozen.add(name)
    const logFrom = ctl.cli.stderr.length
    const cpu0 = sampleProc(ctl.pid)
    load.stop(these)
    await scenario.start()
    await delay(2 * graceMs)
    await scenario.end()
    const endedAt = Date.now()
    await pollUntil(() => these.every((name) => watch!.unknownAt.has(name)), graceMs + 60_000)
    // One more grace period: a late false mark would show up here.
    await delay(graceMs)
    const cpu1 = sampleProc(ctl.pid)
    // From the controller's own log line of each mark (its ISO time, this machine's wall clock, as endedAt).
    const marks = new Map(marksFrom(ctl, logFrom).map((m) => [m.pool, m.time]))
    const delays = these.flatMap((name) => (marks.has(name) ? [marks.get(name)! - endedAt] : []))
    const falseUnknowns = new Set([...watch.unknownAt.keys(), ...marksFrom(ctl, 0).map((m) => m.pool)].filter((name) => !frozen.has(name)))
    const newSpells = blindReasons(ctl, logFrom)
    rows.push([
      scenario.name,
      fmt(falseUnknowns.size),
      `${delays.length} of ${these.length}`,
      delays.length === 0 ? '-' : fmt(percentile(delays, 50)),
      delays.length === 0 ? '-' : fmt(Math.max(...delays)),
      fmt(cpuShare(cpu0, cpu1), 1),
      newSpells.length === 0 ? 'none' : [...new Set(newSpells)].join(', '),
    ])
  }
  printTable(
    `Fault scenarios: ${n} pools, renew ${formatDuration(renewMs)}, grace ${formatDuration(graceMs)}, each fault ${formatDuration(2 * graceMs)}, ${frozenPerFault} frozen per fault; ` +
      `false Unknowns cumulative; load average ${fmt(loadavg()[0]!, 2)} on ${availableParallelism()} cores; ${load.failures} renewals failed (during faults); worst renewal gap ${fmt(load.worstGap())} ms`,
    rows,
  )
  process.stdout.write(`controller exited: ${ctl.cli.child.exitCode === null && ctl.cli.child.signalCode === null ? 'no (still running)' : `yes (${String(ctl.cli.child.exitCode ?? ctl.cli.child.signalCode)})`}\n`)
} finally {
  progress('stopping everything')
  watch?.close()
  await load?.close()
  if (controller !== undefined) controller.cli.child.kill('SIGCONT')
  await controller?.stop()
  await proxied?.proxy.close()
  await plane?.stop()
  await rm(auditDir, {recursive: true, force: true})
}

interface LogEntry {
  msg?: string
  reason?: string
  pool?: string
  /** ISO time (the logger's Kubernetes-style timestamps). */
  time?: string
}

function logFrom(ctl: ControllerProcess, from: number): LogEntry[] {
  return ctl.cli.stderr.slice(from).flatMap((line) => {
    try {
      return [JSON.parse(line) as LogEntry]
    } catch {
      return []
    }
  })
}

/** The reason of each blind spell the controller logged from its log line `from` on. */
function blindReasons(ctl: ControllerProcess, from: number): string[] {
  return logFrom(ctl, from).flatMap((e) => (e.msg?.startsWith('view not whole') === true ? [String(e.reason)] : []))
}

/** The controller's marks from its log line `from` on: pool and wall time. */
function marksFrom(ctl: ControllerProcess, from: number): {pool: string; time: number}[] {
  return logFrom(ctl, from).flatMap((e) => (e.msg === 'pool marked Ready=Unknown' ? [{pool: String(e.pool), time: Date.parse(String(e.time))}] : []))
}
