/**
 * An idle poollet (issue 3's figures): resident memory, CPU time per tick and API requests per tick in
 * steady state, for one machine pool whose runtime always answers. The real `ironpool poollet` runs as
 * its own identity against a real control plane whose audit log records that identity's requests.
 * By default it measures twice on one control plane, one pool each, one after the other: at a fast
 * interval (500 ms; many ticks in seconds) and at the poollet's own defaults (10 s; a few minutes), where
 * a cost per second of idle time shows that a fast interval spreads thin (issue 21).
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
import {auditUsers, firstRequest, requestsBetween} from './support/audit.ts'
import {delay, pollUntil} from './support/limit.ts'
import {progress, startBenchPlane} from './support/plane.ts'
import {MiB, sampleProc} from './support/proc.ts'
import {stopProcess} from './support/stop.ts'
import {fmt, printTable} from './support/table.ts'

const flags = parseArgs({
  mode: {default: 'both', help: "fast: --interval and friends below; default: the poollet's own defaults (10 s interval, no heartbeat flags), 18 ticks after 3 unless --ticks/--warmup-ticks say otherwise: CPU per tick with the idle time between ticks as a real poollet has it; both: fast, then default (about four minutes)"},
  interval: {default: '500ms', help: '--heartbeat-interval (mode fast)'},
  ticks: {default: '', help: 'ticks measured (default 20; 18 in mode default)'},
  'warmup-ticks': {default: '', help: 'ticks before measuring (Lease created, Ready written, watch synced; default 5, 3 in mode default)'},
  'node-flags': nodeFlagsSpec("the poollet's"),
})
const kind = POOL_KINDS.machine
if (!['fast', 'default', 'both'].includes(flags.mode)) throw new Error(`--mode=${flags.mode}: want fast, default or both`)
const modes = (flags.mode === 'both' ? ['fast', 'default'] : [flags.mode]) as ('fast' | 'default')[]
const nodeFlags = nodeFlagsArg(flags['node-flags'])

/** What one measurement runs: its pool, the poollet's flags, how many ticks. */
function settingsOf(mode: 'fast' | 'default') {
  const defaults = mode === 'default'
  const intervalMs = defaults ? POOLLET_DEFAULTS.heartbeatIntervalMs : durationMs('interval', flags.interval)
  // The probe deadline must be below the interval; the Lease must outlive a few intervals (issue 3's rules).
  // Mode default passes no heartbeat flag at all: what runs is what a poollet runs when nobody tunes it.
  const poolletArgs = defaults ? [] : [`--heartbeat-interval=${formatDuration(intervalMs)}`, `--heartbeat-status-timeout=${formatDuration(intervalMs / 2)}`, `--heartbeat-lease-duration=${formatDuration(Math.max(4 * intervalMs, 1000))}`]
  const pool = `bench-pool-${mode}`
  return {
    pool,
    username: `${kind.poolletUserPrefix}${pool}`,
    intervalMs,
    ticks: positiveInt('ticks', flags.ticks || (defaults ? '18' : '20')),
    warmup: positiveInt('warmup-ticks', flags['warmup-ticks'] || (defaults ? '3' : '5')),
    poolletArgs,
    described: defaults ? `the poollet's defaults (--heartbeat-interval=${formatDuration(intervalMs)})` : poolletArgs.join(' '),
  }
}
const runs = modes.map(settingsOf)

const dir = await mkdtemp(path.join(tmpdir(), 'ironpool-bench-'))
let plane: ControlPlane | undefined
try {
  ensureBuilt()
  const audit = await auditUsers(dir, runs.map((run) => run.username))
  progress('control plane (auditing the poollets only)')
  plane = await startBenchPlane({apiServerArgs: audit.apiServerArgs})
  const admin = new KubeConfig()
  admin.loadFromFile(plane.adminKubeconfig)
  for (const run of runs) await measure(plane, admin, audit.logFile, run)
} finally {
  progress('stopping everything')
  await plane?.stop()
  await rm(dir, {recursive: true, force: true})
}

async function measure(plane: ControlPlane, admin: KubeConfig, auditLog: string, run: ReturnType<typeof settingsOf>): Promise<void> {
  const {pool, username, intervalMs, ticks, warmup, poolletArgs, described} = run
  const {group, version, plural} = kind
  await admin.makeApiClient(CustomObjectsApi).createClusterCustomObject({group, version, plural, body: {apiVersion: `${group}/${version}`, kind: kind.kind, metadata: {name: pool}, spec: {}}})
  const runtime: TestRuntime = await startTestRuntime({kind, socketPath: path.join(dir, `${pool}.sock`)})
  let poollet: CliProcess | undefined
  try {
    const identity = await plane.userIdentity(username, [kind.poolletGroup])
    progress(`poollet, ${described}`)
    const spawnedAt = Date.now()
    poollet = new CliProcess(['poollet', `--pool-name=${pool}`, `--kind=${kind.name}`, `--runtime-endpoint=${runtime.endpoint}`, `--kubeconfig=${identity.kubeconfig}`, '--log-format=json', ...poolletArgs], {}, nodeFlags)
    const started = poollet
    const probes = () => runtime.calls.probe
    const afterProbe = async (count: number) => {
      const ok = await pollUntil(() => probes() >= count, (count - probes() + 2) * intervalMs * 3 + 20_000, 2)
      if (!ok) throw new Error(`poollet made ${probes()} probes, wanted ${count}:\n${started.stderr.slice(-20).join('\n')}`)
    }
    await afterProbe(warmup)
    const p0 = probes()
    const from = {ms: Date.now(), proc: sampleProc(started.child.pid!)}
    await afterProbe(p0 + ticks)
    const to = {ms: Date.now(), proc: sampleProc(started.child.pid!)}
    const measured = probes() - p0
    await delay(500) // the audit log is written as requests complete; let the last one land
    const requests = requestsBetween(auditLog, from.ms, to.ms, username)
    const startup = requestsBetween(auditLog, 0, from.ms, username)
    // The first Lease write (create, or update of one left by an earlier holder) as kube-apiserver received it.
    const firstLease = firstRequest(auditLog, ['create', 'update'], 'leases', username)
    const errors = started.logs().filter((l) => Number(l.level) >= 50 || l.level === 'error').length
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
    if (poollet !== undefined) await stopProcess(poollet)
    await runtime.stop()
  }
}
