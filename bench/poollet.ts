/**
 * An idle poollet (issue 3's figures): resident memory, CPU time per tick and API requests per tick in
 * steady state, for one machine pool whose runtime always answers. The real `ironpool poollet` runs as
 * its own identity against a real control plane whose audit log records that identity's requests.
 *
 * Ticks are counted by the test runtime's probe counter (in this process, so counting costs the
 * poollet nothing). The window runs from just after one probe arrives to just after the K-th next one,
 * so it holds K whole ticks; CPU and requests in it are divided by K.
 */
import {CustomObjectsApi, KubeConfig} from '@kubernetes/client-node'
import {mkdtemp, rm} from 'node:fs/promises'
import {availableParallelism, loadavg, tmpdir} from 'node:os'
import path from 'node:path'
import type {ControlPlane} from '../src/controlplane/control-plane.ts'
import {formatDuration} from '../src/core/durations.ts'
import {POOLLET_DEFAULTS} from '../src/core/heartbeat/poollet-options.ts'
import {POOL_KINDS} from '../src/core/pool-kinds.ts'
import {startTestRuntime, type TestRuntime} from '../src/iri/test-runtime.ts'
import {CliProcess, ensureBuilt} from '../test/support/cli.ts'
import {durationMs, nodeFlagsArg, nodeFlagsSpec, parseArgs, positiveInt} from './support/args.ts'
import {auditOneUser, firstRequest, requestsBetween} from './support/audit.ts'
import {delay, pollUntil} from './support/limit.ts'
import {progress, startBenchPlane} from './support/plane.ts'
import {MiB, sampleProc} from './support/proc.ts'
import {stopProcess} from './support/stop.ts'
import {fmt, printTable} from './support/table.ts'

const flags = parseArgs({
  mode: {default: 'fast', help: "fast: --interval and friends below; default: the poollet's own defaults (10 s interval, no heartbeat flags), 18 ticks after 3 unless --ticks/--warmup-ticks say otherwise: CPU per tick with the idle time between ticks as a real poollet has it"},
  interval: {default: '500ms', help: '--heartbeat-interval (mode fast)'},
  ticks: {default: '', help: 'ticks measured (default 20; 18 in mode default, three minutes)'},
  'warmup-ticks': {default: '', help: 'ticks before measuring (Lease created, Ready written, watch synced; default 5, 3 in mode default)'},
  'node-flags': nodeFlagsSpec("the poollet's"),
})
const kind = POOL_KINDS.machine
const pool = 'bench-pool'
const username = `${kind.poolletUserPrefix}${pool}`
if (flags.mode !== 'fast' && flags.mode !== 'default') throw new Error(`--mode=${flags.mode}: want fast or default`)
const defaults = flags.mode === 'default'
const intervalMs = defaults ? POOLLET_DEFAULTS.heartbeatIntervalMs : durationMs('interval', flags.interval)
const ticks = positiveInt('ticks', flags.ticks || (defaults ? '18' : '20'))
const warmup = positiveInt('warmup-ticks', flags['warmup-ticks'] || (defaults ? '3' : '5'))
const nodeFlags = nodeFlagsArg(flags['node-flags'])
// The probe deadline must be below the interval; the Lease must outlive a few intervals (issue 3's rules).
// Mode default passes no heartbeat flag at all: what runs is what a poollet runs when nobody tunes it.
const poolletArgs = defaults ? [] : [`--heartbeat-interval=${formatDuration(intervalMs)}`, `--heartbeat-status-timeout=${formatDuration(intervalMs / 2)}`, `--heartbeat-lease-duration=${formatDuration(Math.max(4 * intervalMs, 1000))}`]
const described = defaults ? `the poollet's defaults (--heartbeat-interval=${formatDuration(intervalMs)})` : poolletArgs.join(' ')

const dir = await mkdtemp(path.join(tmpdir(), 'ironpool-bench-'))
let plane: ControlPlane | undefined
let runtime: TestRuntime | undefined
let poollet: CliProcess | undefined
try {
  ensureBuilt()
  const audit = await auditOneUser(dir, username)
  progress('control plane (auditing the poollet only)')
  plane = await startBenchPlane({apiServerArgs: audit.apiServerArgs})
  const admin = new KubeConfig()
  admin.loadFromFile(plane.adminKubeconfig)
  const {group, version, plural} = kind
  await admin.makeApiClient(CustomObjectsApi).createClusterCustomObject({group, version, plural, body: {apiVersion: `${group}/${version}`, kind: kind.kind, metadata: {name: pool}, spec: {}}})
  runtime = await startTestRuntime({kind, socketPath: path.join(dir, 'runtime.sock')})
  const identity = await plane.userIdentity(username, [kind.poolletGroup])

  progress(`poollet, ${described}`)
  const spawnedAt = Date.now()
  poollet = new CliProcess(['poollet', `--pool-name=${pool}`, `--kind=${kind.name}`, `--runtime-endpoint=${runtime.endpoint}`, `--kubeconfig=${identity.kubeconfig}`, '--log-format=json', ...poolletArgs], {}, nodeFlags)
  const probes = () => runtime!.calls.probe
  const afterProbe = async (count: number) => {
    const ok = await pollUntil(() => probes() >= count, (count - probes() + 2) * intervalMs * 3 + 20_000, 2)
    if (!ok) throw new Error(`poollet made ${probes()} probes, wanted ${count}:\n${poollet!.stderr.slice(-20).join('\n')}`)
  }
  await afterProbe(warmup)
  const p0 = probes()
  const from = {ms: Date.now(), proc: sampleProc(poollet.child.pid!)}
  await afterProbe(p0 + ticks)
  const to = {ms: Date.now(), proc: sampleProc(poollet.child.pid!)}
  const measured = probes() - p0
  await delay(500) // the audit log is written as requests complete; let the last one land
  const requests = requestsBetween(audit.logFile, from.ms, to.ms)
  const startup = requestsBetween(audit.logFile, 0, from.ms)
  // The first Lease write (create, or update of one left by an earlier holder) as kube-apiserver received it.
  const firstLease = firstRequest(audit.logFile, ['create', 'update'], 'leases')
  const errors = poollet.logs().filter((l) => Number(l.level) >= 50 || l.level === 'error').length

  process.stdout.write(`\nRun: one machine pool, ${described}, ${measured} ticks measured after ${warmup} warm-up ticks; ` +
    `load average ${fmt(loadavg()[0]!, 2)} on ${availableParallelism()} cores; ${errors} error log lines\n`)
  printTable('Idle poollet', [
    ['figure', 'value'],
    ['resident memory (VmRSS), MiB', fmt(to.proc.rssBytes / MiB, 1)],
    ['  of which its own (RssAnon), MiB', to.proc.anonBytes === undefined ? '-' : fmt(to.proc.anonBytes / MiB, 1)],
    ['  of which file-backed, the node binary shared by all (RssFile), MiB', to.proc.fileBytes === undefined ? '-' : fmt(to.proc.fileBytes / MiB, 1)],
    ['peak resident memory (VmHWM), MiB', fmt(to.proc.hwmBytes / MiB, 1)],
    ['CPU time per tick, ms (all threads, scheduler ns / ticks)', fmt((to.proc.cpuMs - from.proc.cpuMs) / measured, 2)],
    ['first Lease write after spawn, ms (audit log; millisecond clocks)', firstLease === undefined ? '-' : fmt(firstLease - spawnedAt)],
    ['CPU share at this interval, % of a core', fmt((100 * (to.proc.cpuMs - from.proc.cpuMs)) / (to.proc.at - from.proc.at), 2)],
  ])
  // Start-up requests (before the window) are shown for context: they are where the watch's list lives.
  const rows = [['request (verb resource)', `start-up + ${warmup} warm-up ticks`, 'in window', 'per tick']]
  for (const key of [...new Set([...startup.keys(), ...requests.keys()])].sort()) {
    const count = requests.get(key) ?? 0
    rows.push([key, fmt(startup.get(key) ?? 0), fmt(count), fmt(count / measured, 2)])
  }
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0)
  rows.push(['all', fmt(sum(startup)), fmt(sum(requests)), fmt(sum(requests) / measured, 2)])
  printTable(`API requests by the poollet (${username}), from kube-apiserver's audit log`, rows)
} finally {
  progress('stopping everything')
  if (poollet !== undefined) await stopProcess(poollet)
  await runtime?.stop()
  await plane?.stop()
  await rm(dir, {recursive: true, force: true})
}
