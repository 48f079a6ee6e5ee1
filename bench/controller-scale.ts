/**
 * The controller at 10k–100k pools against a fake API (issue 27): the real `ironpool controller
 * --kinds=machine` against support/fake-lease-api.ts, which serves N pools and Leases (paginated) and
 * streams MODIFIED Lease events as kube-apiserver shapes them, through the controller's real HTTP,
 * list+watch and engine path. Phases, each measured from /proc:
 *
 * 1. start → /readyz (the view whole): the initial lists of N pools and N Leases;
 * 2. idle (no event at all, --idle): CPU per second, what the pools cost while nothing happens;
 * 3. steady (--steady at N / --heartbeat events a second, every pool renewed once a heartbeat):
 *    CPU per event, RSS, bytes per pool above a 10-pool controller's;
 * 4. --stop-percent of the pools stop renewing while the rest go on: the time from each one's deadline
 *    (its last event sent + grace) to its status write reaching the fake, and status writes for pools
 *    never stopped (false Unknowns).
 */
import {writeFile, mkdtemp, rm} from 'node:fs/promises'
import {availableParallelism, loadavg, tmpdir} from 'node:os'
import path from 'node:path'
import {errorMessage} from '../src/core/errors.ts'
import {POOL_KINDS} from '../src/core/pool-kinds.ts'
import {ensureBuilt} from '../test/support/cli.ts'
import {durationMs, nodeFlagsArg, nodeFlagsSpec, parseArgs, positiveInt} from './support/args.ts'
import {ControllerProcess} from './support/controller-process.ts'
import {FakeLeaseApi} from './support/fake-lease-api.ts'
import {delay, pollUntil} from './support/limit.ts'
import {progress} from './support/plane.ts'
import {MiB, sampleProc, type ProcSample} from './support/proc.ts'
import {total} from './support/prom-text.ts'
import {summary} from './support/stats.ts'
import {fmt, printTable} from './support/table.ts'

const flags = parseArgs({
  pools: {default: '100000', help: 'machine pools (and Leases)'},
  heartbeat: {default: '10s', help: "the poollets' renew interval: events/s = pools / heartbeat"},
  'grace-period': {default: '50s', help: "the controller's --grace-period"},
  idle: {default: '30s', help: 'window with no event at all, after the view is whole'},
  steady: {default: '30s', help: 'window at the heartbeat rate, nothing stopped'},
  'stop-percent': {default: '1', help: 'pools that stop renewing after the steady window (every Nth pool); 0: no stop phase'},
  'node-flags': nodeFlagsSpec("the controller's"),
  qps: {default: '', help: "the controller's --qps (default: its own, 100)"},
  burst: {default: '', help: "the controller's --burst (default: its own, 200)"},
  log: {default: '', help: "a file to write the controller's whole log to (JSON lines), to read why a mark came when it did"},
})
const nodeFlags = nodeFlagsArg(flags['node-flags'])
const kind = POOL_KINDS.machine
const n = positiveInt('pools', flags.pools)
const heartbeatMs = durationMs('heartbeat', flags.heartbeat)
const graceMs = durationMs('grace-period', flags['grace-period'])
const idleMs = durationMs('idle', flags.idle)
const steadyMs = durationMs('steady', flags.steady)
const stopPercent = Number(flags['stop-percent'])
if (!(stopPercent >= 0 && stopPercent < 100)) throw new Error(`--stop-percent must be from 0 (no stop phase) to below 100, not ${flags['stop-percent']}`)
const rate = Math.round((n * 1000) / heartbeatMs)
// Every pool was last renewed by the list; the idle window and one round of renewals must end inside grace.
if (2_000 + idleMs + heartbeatMs >= graceMs) throw new Error(`--idle (${flags.idle}) + --heartbeat (${flags.heartbeat}) + 2 s must be shorter than --grace-period (${flags['grace-period']}), or the idle pools go overdue`)
/** The controller's request limits, when the run sets them (the mass death at 100k: bench/README.md). */
const limits = [...(flags.qps === '' ? [] : [`--qps=${flags.qps}`]), ...(flags.burst === '' ? [] : [`--burst=${flags.burst}`])]
const EVENTS_METRIC = 'ironpool_controller_lease_events_total'
const names = (count: number) => Array.from({length: count}, (_, i) => `bench-${String(i).padStart(6, '0')}`)

const dir = await mkdtemp(path.join(tmpdir(), 'ironpool-bench-scale-'))
const running: {api?: FakeLeaseApi; controller?: ControllerProcess} = {}

/** A controller against a fresh fake API with `count` pools; resolves once /readyz says whole. */
async function startController(count: number): Promise<{api: FakeLeaseApi; controller: ControllerProcess; spawnedAt: number; wholeAt: number}> {
  const api = await FakeLeaseApi.start(kind, names(count))
  running.api = api
  const kubeconfig = path.join(dir, `kubeconfig-${count}`)
  await writeFile(kubeconfig, api.kubeconfig())
  const spawnedAt = performance.now()
  const controller = new ControllerProcess([`--kubeconfig=${kubeconfig}`, '--kinds=machine', `--grace-period=${graceMs}ms`, ...limits], nodeFlags)
  running.controller = controller
  await controller.ready()
  const wholeAt = performance.now()
  if (!(await pollUntil(() => api.watching, 10_000))) throw new Error('the controller opened no Lease watch')
  return {api, controller, spawnedAt, wholeAt}
}

async function stopRunning(): Promise<void> {
  await running.controller?.stop()
  await running.api?.close()
  running.controller = undefined
  running.api = undefined
}

const ms = (from: ProcSample, to: ProcSample) => to.cpuMs - from.cpuMs
const wall = (from: ProcSample, to: ProcSample) => to.at - from.at

try {
  ensureBuilt()
  progress('baseline: a controller with 10 pools')
  const small = await startController(10)
  await delay(5_000)
  const baseline = sampleProc(small.controller.pid)
  await stopRunning()

  progress(`controller against a fake API: ${fmt(n)} pools, ${fmt(rate)} events/s at the ${flags.heartbeat} heartbeat, grace ${flags['grace-period']}`)
  const {api, controller, spawnedAt, wholeAt} = await startController(n)
  const counted = async () => total(await controller.metrics(), EVENTS_METRIC)
  const afterSync = sampleProc(controller.pid)

  progress(`idle: ${flags.idle} without an event`)
  await delay(2_000)
  const idle0 = sampleProc(controller.pid)
  await delay(idleMs)
  const idle1 = sampleProc(controller.pid)

  progress('warm-up: one heartbeat of events')
  await api.stream(rate * Math.max(1, Math.round(heartbeatMs / 1000)), rate)
  progress(`steady: ${flags.steady} at ${fmt(rate)} events/s`)
  const seen0 = await counted()
  const steady0 = sampleProc(controller.pid)
  await api.stream(Math.round((rate * steadyMs) / 1000), rate)
  if (!(await pollUntil(async () => (await counted()) >= seen0 + Math.round((rate * steadyMs) / 1000), 60_000, 20))) throw new Error('the controller fell behind the stream')
  const steady1 = sampleProc(controller.pid)
  const seen = (await counted()) - seen0
  const heapMetrics = await controller.metrics()
  const heapUsed = total(heapMetrics, 'nodejs_heap_size_used_bytes')
  // Where RSS goes beyond the live heap: V8's committed heap (what it took from the OS and keeps) and
  // the memory outside it (Buffers: HTTP bodies).
  const heapTotal = total(heapMetrics, 'nodejs_heap_size_total_bytes')
  const external = total(heapMetrics, 'nodejs_external_memory_bytes')

  const every = stopPercent === 0 ? Infinity : Math.round(100 / stopPercent)
  const stopped = Array.from({length: n}, (_, i) => i).filter((i) => i % every === every - 1)
  progress(`${fmt(stopped.length)} pools stop renewing; the others go on`)
  api.stop(stopped)
  const stopAt = performance.now()
  const writesBefore = api.statusWrites.length
  // The names once: names(n) inside the map built 100,000 strings per stopped pool, which held the fake
  // API's event loop (the same process) for ~8 s right after the stop, and the controller rightly
  // called that an API stall (13 s blind in every 1 % run at 100k until then).
  const allNames = names(n)
  const stoppedNames = new Set(stopped.map((i) => allNames[i]!))
  const marked = () => new Set(api.statusWrites.slice(writesBefore).filter((w) => stoppedNames.has(w.name)).map((w) => w.name))
  let done = false
  // A stream that fails (the controller closed its watch) ends the wait at once, and the run with the
  // controller's log (the catch below), not minutes later as an unhandled rejection with no log.
  let streamFailed: unknown
  const streaming = (async () => {
    while (!done) await api.stream(rate, rate)
  })().catch((error: unknown) => {
    streamFailed = error
    done = true
  })
  const allMarked = stopped.length === 0 || (await pollUntil(() => streamFailed !== undefined || marked().size === stopped.length, graceMs + heartbeatMs + 60_000, 200))
  if (streamFailed !== undefined) throw streamFailed instanceof Error ? streamFailed : new Error(errorMessage(streamFailed))
  // One heartbeat more: a late or false mark would show.
  await delay(heartbeatMs)
  done = true
  await streaming
  const end = sampleProc(controller.pid)
  // Where RssAnon goes at the end: V8's spaces (used / committed), and what lies outside V8's heap
  // (malloc'd: Buffers, the HTTP machinery, the allocator's own leftovers), to tell live data from headroom.
  const endMetrics = await controller.metrics()
  const spaces = ['old', 'new', 'large_object', 'code'].map((space) => {
    const used = total(endMetrics, 'nodejs_heap_space_size_used_bytes', {space})
    const size = total(endMetrics, 'nodejs_heap_space_size_total_bytes', {space})
    return `${space} ${fmt(used / MiB, 1)} / ${fmt(size / MiB, 1)}`
  })
  const endCommitted = total(endMetrics, 'nodejs_heap_size_total_bytes')

  const writes = api.statusWrites.slice(writesBefore)
  const firstWrite = new Map<string, number>()
  for (const w of writes) if (!firstWrite.has(w.name)) firstWrite.set(w.name, w.at)
  const delays = stopped.filter((i) => firstWrite.has(allNames[i]!)).map((i) => firstWrite.get(allNames[i]!)! - (api.lastSent[i]! + graceMs))
  const own = controller.marks().map((m) => m.delayMs)
  const falseUnknowns = new Set(api.statusWrites.filter((w) => !stoppedNames.has(w.name)).map((w) => w.name)).size
  const d = summary(delays.length > 0 ? delays : [NaN])
  const o = summary(own.length > 0 ? own : [NaN])
  const anon = (s: ProcSample) => s.anonBytes ?? NaN

  process.stdout.write(
    `\nRun: ${fmt(n)} pools, heartbeat ${flags.heartbeat} (${fmt(rate)} events/s offered), grace ${flags['grace-period']}, ${fmt(stopped.length)} stopped; ` +
      `load average ${fmt(loadavg()[0]!, 2)} on ${availableParallelism()} cores\n`,
  )
  printTable(`ironpool controller at ${fmt(n)} pools (fake API)`, [
    ['figure', 'value'],
    ['start → view whole (/readyz), s', fmt((wholeAt - spawnedAt) / 1000, 1)],
    ['RSS when whole, MiB (own: RssAnon)', `${fmt(afterSync.rssBytes / MiB, 1)} (${fmt(anon(afterSync) / MiB, 1)})`],
    ['idle CPU, ms per second', fmt(ms(idle0, idle1) / (wall(idle0, idle1) / 1000), 2)],
    ['idle CPU per 1,000 pools, ms per second', fmt((ms(idle0, idle1) / (wall(idle0, idle1) / 1000) / n) * 1000, 3)],
    ['events/s delivered, steady', fmt((seen * 1000) / wall(steady0, steady1))],
    ['controller CPU, steady, % of a core', fmt((100 * ms(steady0, steady1)) / wall(steady0, steady1), 1)],
    ['controller CPU per event, steady, µs', fmt((ms(steady0, steady1) * 1000) / seen, 1)],
    ['V8 heap used after the steady window, MiB', fmt(heapUsed / MiB, 1)],
    ['V8 heap committed; external (Buffers), MiB', `${fmt(heapTotal / MiB, 1)}; ${fmt(external / MiB, 1)}`],
    ['RSS at end / peak, MiB', `${fmt(end.rssBytes / MiB, 1)} / ${fmt(end.hwmBytes / MiB, 1)}`],
    ['own memory (RssAnon) at end, MiB; a 10-pool controller', `${fmt(anon(end) / MiB, 1)}; ${fmt(anon(baseline) / MiB, 1)}`],
    ['V8 spaces at end, used / committed, MiB', spaces.join('; ')],
    ['RssAnon at end outside V8\'s committed heap, MiB', fmt((anon(end) - endCommitted) / MiB, 1)],
    ['bytes per pool above the 10-pool controller (RssAnon)', fmt((anon(end) - anon(baseline)) / n)],
    ['stopped pools marked', `${fmt(new Set(writes.filter((w) => stoppedNames.has(w.name)).map((w) => w.name)).size)} of ${fmt(stopped.length)}${allMarked ? '' : ' (timed out)'}`],
    ['deadline → status write at the API, ms p50 / p99 / max', `${fmt(d.p50)} / ${fmt(d.p99)} / ${fmt(d.max)}`],
    ["controller's own delay (its log), ms p50 / p99 / max", `${fmt(o.p50)} / ${fmt(o.p99)} / ${fmt(o.max)}`],
    ['false Unknowns (status writes for pools never stopped)', fmt(falseUnknowns)],
    ['from the stop to the last mark, s', fmt(((writes.filter((w) => stoppedNames.has(w.name)).at(-1)?.at ?? NaN) - stopAt) / 1000, 1)],
  ])
} catch (error) {
  const lines = running.controller?.cli.stderr.filter((l) => !l.includes('readyz check failed')) ?? []
  process.stderr.write(`controller log (last lines but /readyz's):\n${lines.slice(-25).join('\n').slice(0, 20_000)}\n`)
  throw error
} finally {
  progress('stopping everything')
  if (flags.log !== '' && running.controller !== undefined) await writeFile(flags.log, running.controller.cli.stderr.join('\n') + '\n')
  await stopRunning()
  await rm(dir, {recursive: true, force: true})
}
