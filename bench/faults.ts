/**
 * The fault scenarios of test/integration/faults at a few hundred pools (issue 9's figures). N pools
 * whose Leases the bench renews (bench/support/lease-load.ts), the real `ironpool controller` as its
 * ServiceAccount, talking to the API through the test proxy (TLS terminated, so that one Lease watch can
 * be ended and its reopening stalled). Before each fault a few more Leases stop being renewed: the
 * frozen pools, which must be marked once the view is whole again; every other pool is live and must
 * never be Unknown. Prints, per scenario: false Unknowns, frozen pools marked, the delay from the end of
 * the fault to each mark (p50, max), the controller's CPU; and the API requests per second that the
 * guards cost in steady state, from kube-apiserver's audit log of the controller's user.
 *
 * Then the live-verdict scenarios (issue 18): dead pools must be marked while the API misbehaves. A
 * lossy link (the proxy spoils 2 % and 5 % of the controller's requests: test/support/tcp-proxy.ts) while
 * --dying pools stop at once; a flapping API (kube-apiserver paused 1.5 s every 4 s for 40 s) while
 * --frozen pools stop at its start; with --max-unhealthy=30% (the controller restarted with it), 10 % of
 * the pools stop (all must be marked), then every pool is cut off at once (none may be marked). Prints,
 * per scenario: false Unknowns, dead pools marked (in the API, and in the controller's log), the time
 * from each death to its mark (p50, max, from the controller's log line), the controller's requests per
 * second above its steady rate (from the proxy), requests spoilt, blind spells. Dead pools are revived
 * after each scenario (renewed and set Ready=True, as a returning poollet does). Asserts nothing.
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
import {reviveReady, seedPools} from './support/seed.ts'
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
  only: {default: 'all', help: 'which scenarios: all, guards (the guards\' faults) or verdicts (issue 18\'s live verdicts)'},
  dying: {default: '100', help: 'live-verdict scenarios: pools that stop at once during a lossy link, and 10 % ... of --pools in the breaker\'s first scenario'},
  'verdict-timeout': {default: '5m', help: 'live-verdict scenarios: how long to wait for every dead pool to be marked'},
  seed: {default: '18', help: 'the lossy link\'s seed'},
  'flapping-grace': {default: '4s', help: 'the controller\'s --grace-period for the flapping API (the issue\'s 4 s: at 8 s its probe waits 2 s, longer than a pause)'},
})
const kind = POOL_KINDS.machine
const n = positiveInt('pools', flags.pools)
const renewMs = durationMs('renew-interval', flags['renew-interval'])
const graceMs = durationMs('grace-period', flags['grace-period'])
const frozenPerFault = positiveInt('frozen', flags.frozen)
const steadyMs = durationMs('steady', flags.steady)
const only = flags.only
if (!['all', 'guards', 'verdicts'].includes(only)) throw new Error(`--only must be all, guards or verdicts; got ${JSON.stringify(only)}`)
const dying = positiveInt('dying', flags.dying)
const verdictTimeoutMs = durationMs('verdict-timeout', flags['verdict-timeout'])
const seed = positiveInt('seed', flags.seed)
const flappingGraceMs = durationMs('flapping-grace', flags['flapping-grace'])
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
  proxied = await proxyKubeconfig(identity.kubeconfig, path.join(auditDir, 'controller.kubeconfig'), {terminateTls: true, lossy: {seed}})
  const proxy = proxied.proxy
  const controllerArgs = [`--kubeconfig=${proxied.kubeconfig}`, `--grace-period=${formatDuration(graceMs)}`, '--kinds=machine']
  controller = new ControllerProcess(controllerArgs)
  await controller.ready()
  let ctl = controller
  const p = plane
  await delay(Math.max(2 * renewMs, 5_000))

  progress(`steady window, ${formatDuration(steadyMs)}: the controller's requests`)
  const steadyFrom = Date.now()
  const steadyRequests = proxy.requests.length
  await delay(steadyMs)
  const steadyTo = Date.now()
  const steadyPerSecond = (proxy.requests.length - steadyRequests) / ((steadyTo - steadyFrom) / 1000)
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
  const guardScenarios: Scenario[] = [
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
  const scenarios = only === 'verdicts' ? [] : guardScenarios
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
  if (scenarios.length > 0) printTable(
    `Fault scenarios: ${n} pools, renew ${formatDuration(renewMs)}, grace ${formatDuration(graceMs)}, each fault ${formatDuration(2 * graceMs)}, ${frozenPerFault} frozen per fault; ` +
      `false Unknowns cumulative; load average ${fmt(loadavg()[0]!, 2)} on ${availableParallelism()} cores; ${load.failures} renewals failed (during faults); worst renewal gap ${fmt(load.worstGap())} ms`,
    rows,
  )
  process.stdout.write(`controller exited: ${ctl.cli.child.exitCode === null && ctl.cli.child.signalCode === null ? 'no (still running)' : `yes (${String(ctl.cli.child.exitCode ?? ctl.cli.child.signalCode)})`}\n`)

  if (only !== 'guards') {
    const loadGen = load
    const poll = watch
    // The guards' frozen pools stay dead; the verdict scenarios choose among the others.
    const usable = names.filter((name) => !frozen.has(name))
    /** Every k-th usable pool, spread over the renewal phases. */
    const pick = (count: number) => {
      const step = usable.length / count
      return Array.from({length: Math.min(count, usable.length)}, (_, i) => usable[Math.floor(i * step)]!)
    }
    const verdictRows: string[][] = [
      ['scenario', 'false Unknowns', 'dead marked (API)', 'marks logged', 'death → mark p50 s', 'max s', 'extra requests/s', 'spoilt', 'blind spells (reason)'],
    ]
    interface Verdict {
      name: string
      dead: string[]
      /** Starts the fault; resolves when the fault may end (the flapping's 40 s), or at once. */
      fault(): Promise<void>
      end(): void | Promise<void>
      /** Pools cut off that must not be marked (a partition): reconnected at the end. */
      cut?: string[]
    }
    const flap = async () => {
      for (let cycle = 0; cycle < 10; cycle++) {
        p.pauseApiServer()
        await delay(1_500)
        p.resumeApiServer()
        await delay(2_500)
      }
    }
    const runVerdict = async (v: Verdict) => {
      progress(`${v.name}: ${v.dead.length} pools stop${v.cut ? `, ${v.cut.length} cut off` : ''}`)
      const logFrom = ctl.cli.stderr.length
      const requestsFrom = proxy.requests.length
      const spoiltFrom = proxy.spoiled.length
      const startedAt = Date.now()
      const faultDone = v.fault()
      loadGen.stop([...v.dead, ...(v.cut ?? [])])
      const diedAt = Date.now()
      if (v.cut !== undefined) {
        // Time for every cut pool to fall due and be judged: three grace periods, then one more.
        await delay(3 * graceMs)
      } else {
        await pollUntil(() => v.dead.every((name) => poll.unknownAt.has(name)), verdictTimeoutMs, 200)
      }
      await faultDone
      await v.end()
      // One more grace period: a late false mark would show up here.
      await delay(graceMs)
      const seconds = (Date.now() - startedAt) / 1000
      const requests = proxy.requests.length - requestsFrom
      const marks = marksFrom(ctl, logFrom)
      const deadSet = new Set(v.dead)
      const firstMark = new Map<string, number>()
      for (const m of marks) if (deadSet.has(m.pool) && !firstMark.has(m.pool)) firstMark.set(m.pool, m.time)
      const delays = [...firstMark.values()].map((t) => (t - diedAt) / 1000)
      const falseUnknowns = new Set([...marks.map((m) => m.pool), ...poll.unknownAt.keys()].filter((name) => !deadSet.has(name) && !frozen.has(name)))
      const spells = blindReasons(ctl, logFrom)
      verdictRows.push([
        v.name,
        fmt(falseUnknowns.size),
        v.dead.length === 0 ? '-' : `${v.dead.filter((name) => poll.unknownAt.has(name)).length} of ${v.dead.length}`,
        v.dead.length === 0 ? '-' : `${firstMark.size} of ${v.dead.length}`,
        delays.length === 0 ? '-' : fmt(percentile(delays, 50), 1),
        delays.length === 0 ? '-' : fmt(Math.max(...delays), 1),
        fmt(requests / seconds - steadyPerSecond, 1),
        `${proxy.spoiled.length - spoiltFrom} of ${requests}`,
        spells.length === 0 ? 'none' : `${spells.length} (${[...new Set(spells)].join(', ')})`,
      ])
      // Revive: renewed and Ready=True again, as a poollet that comes back; forgotten by the Unknown poll.
      const back = [...v.dead, ...(v.cut ?? [])]
      loadGen.resume(back)
      await reviveReady(admin, kind, [...v.dead, ...falseUnknowns])
      for (const name of [...back, ...falseUnknowns]) poll.unknownAt.delete(name)
      await delay(2 * renewMs)
      return {falseUnknowns: falseUnknowns.size, marks: marks.length}
    }
    const lossy = (share: number): Verdict => ({
      name: `lossy link, ${share * 100} % spoilt`,
      dead: pick(dying),
      fault: () => {
        proxy.spoilRequests(share)
        return Promise.resolve()
      },
      end: () => proxy.heal(),
    })
    const restart = async (args: string[]) => {
      progress(`controller restarted with ${args.join(' ')}`)
      await ctl.stop()
      controller = new ControllerProcess(args)
      await controller.ready()
      ctl = controller
      await delay(Math.max(2 * renewMs, 5_000))
    }
    await runVerdict(lossy(0.02))
    await runVerdict(lossy(0.05))
    await restart([...controllerArgs.filter((a) => !a.startsWith('--grace-period=')), `--grace-period=${formatDuration(flappingGraceMs)}`])
    await runVerdict({name: `flapping API (1.5 s of 4 s, 40 s; grace ${formatDuration(flappingGraceMs)})`, dead: pick(frozenPerFault), fault: flap, end: () => p.resumeApiServer()})
    await restart([...controllerArgs, '--max-unhealthy=30%'])
    const eventsFrom = await breakerEvents(p)
    await runVerdict({name: '10 % dead, --max-unhealthy=30%', dead: pick(Math.round(n / 10)), fault: async () => {}, end: () => {}})
    const breakerBefore = await breakerEvents(p)
    const cut = usable
    const metricsDuring: {open?: number; overdue?: number} = {}
    await runVerdict({
      name: 'all cut off, --max-unhealthy=30%',
      dead: [],
      cut,
      fault: async () => {
        await delay(3 * graceMs - 1_000)
        const samples = await ctl.metrics()
        metricsDuring.open = samples.find((m) => m.name === 'ironpool_controller_breaker_open' && m.labels.kind === kind.name)?.value
        metricsDuring.overdue = samples.find((m) => m.name === 'ironpool_controller_pools_overdue' && m.labels.kind === kind.name)?.value
      },
      end: () => {},
    })
    printTable(
      `Live verdicts: ${n} pools, renew ${formatDuration(renewMs)}, grace ${formatDuration(graceMs)}, ${dying} die at once on the lossy link, ${frozenPerFault} under the flapping API, seed ${seed}; ` +
        `steady ${fmt(steadyPerSecond, 2)} requests/s; load average ${fmt(loadavg()[0]!, 2)} on ${availableParallelism()} cores; worst renewal gap ${fmt(loadGen.worstGap())} ms`,
      verdictRows,
    )
    process.stdout.write(
      `breaker with every pool cut off: open=${String(metricsDuring.open)}, overdue=${String(metricsDuring.overdue)} of ${cut.length} cut off; ` +
        `MaxUnhealthyExceeded Events: ${breakerBefore - eventsFrom} during 10 % dead, ${(await breakerEvents(p)) - breakerBefore} during the partition\n`,
    )
  }
} finally {
  progress('stopping everything')
  watch?.close()
  await load?.close()
  if (controller !== undefined) controller.cli.child.kill('SIGCONT')
  plane?.resumeApiServer()
  await controller?.stop()
  await proxied?.proxy.close()
  await plane?.stop()
  await rm(auditDir, {recursive: true, force: true})
}

/** MaxUnhealthyExceeded Events so far, counting repeats. */
async function breakerEvents(plane: ControlPlane): Promise<number> {
  const out = await plane.kubectl(['get', 'events', '-A', '--field-selector', 'reason=MaxUnhealthyExceeded', '-o', 'json'])
  const items = (JSON.parse(out) as {items: {count?: number; series?: {count?: number}}[]}).items
  return items.reduce((sum, e) => sum + (e.series?.count ?? e.count ?? 1), 0)
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
