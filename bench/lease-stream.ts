/**
 * CPU per Lease event end to end (issue 12): bytes on the watch stream → the list+watch cache → the
 * lifecycle engine's decision, in the real `ironpool controller` process. A loopback server in this
 * process (support/fake-lease-api.ts) serves N machine pools and their Leases, then pushes --events
 * MODIFIED Lease events at --rate; the controller's CPU (utime+stime from /proc) over the stream is
 * divided by the events it counted (its lease-events metric). Printed beside it: a bare JSON.parse of
 * the same lines in this process, and the ratio of the two.
 */
import {writeFile, mkdtemp, rm} from 'node:fs/promises'
import {availableParallelism, loadavg, tmpdir} from 'node:os'
import path from 'node:path'
import {POOL_KINDS} from '../src/core/pool-kinds.ts'
import {ensureBuilt} from '../test/support/cli.ts'
import {nodeFlagsArg, nodeFlagsSpec, parseArgs, positiveInt} from './support/args.ts'
import {ControllerProcess} from './support/controller-process.ts'
import {FakeLeaseApi} from './support/fake-lease-api.ts'
import {pollUntil} from './support/limit.ts'
import {progress} from './support/plane.ts'
import {MiB, sampleProc} from './support/proc.ts'
import {total} from './support/prom-text.ts'
import {fmt, printTable} from './support/table.ts'

const flags = parseArgs({
  pools: {default: '10000', help: 'machine pools (and Leases); events go round-robin over them'},
  events: {default: '400000', help: 'Lease events in the measured stream'},
  rate: {default: '40000', help: 'events per second offered (the controller may take fewer: then the stream waits for it)'},
  warmup: {default: '100000', help: 'events sent before measuring (JIT, caches at size)'},
  'node-flags': nodeFlagsSpec("the controller's"),
})
const nodeFlags = nodeFlagsArg(flags['node-flags'])
const kind = POOL_KINDS.machine
const n = positiveInt('pools', flags.pools)
const events = positiveInt('events', flags.events)
const rate = positiveInt('rate', flags.rate)
const warmup = positiveInt('warmup', flags.warmup)
const names = Array.from({length: n}, (_, i) => `bench-${String(i).padStart(6, '0')}`)
const EVENTS_METRIC = 'ironpool_controller_lease_events_total'

/** CPU microseconds per line of a bare JSON.parse in this process, after a warm-up. */
function jsonParseMicros(lines: readonly string[]): number {
  let sink = 0
  for (const line of lines) sink += (JSON.parse(line) as {type: string}).type.length
  const from = process.cpuUsage()
  for (let round = 0; round < 3; round++) for (const line of lines) sink += (JSON.parse(line) as {type: string}).type.length
  const used = process.cpuUsage(from)
  if (sink === 0) throw new Error('unreachable')
  return (used.user + used.system) / (3 * lines.length)
}

const dir = await mkdtemp(path.join(tmpdir(), 'ironpool-bench-stream-'))
let api: FakeLeaseApi | undefined
let controller: ControllerProcess | undefined
try {
  ensureBuilt()
  api = await FakeLeaseApi.start(kind, names)
  const kubeconfig = path.join(dir, 'kubeconfig')
  await writeFile(kubeconfig, api.kubeconfig())
  progress(`controller against a fake API server: ${fmt(n)} pools`)
  controller = new ControllerProcess([`--kubeconfig=${kubeconfig}`, '--kinds=machine', '--grace-period=5m'], nodeFlags)
  await controller.ready()
  const fake = api
  if (!(await pollUntil(() => fake.watching, 10_000))) throw new Error('the controller opened no Lease watch')
  const counted = async () => total(await controller!.metrics(), EVENTS_METRIC)
  const base = await counted()

  progress(`warm-up: ${fmt(warmup)} events`)
  await api.stream(warmup, rate)
  if (!(await pollUntil(async () => (await counted()) >= base + warmup, 60_000, 50))) throw new Error(`the controller counted ${(await counted()) - base} of ${warmup} warm-up events`)

  progress(`measuring: ${fmt(events)} events offered at ${fmt(rate)}/s`)
  const bytes0 = api.bytes
  const seen0 = await counted()
  const from = sampleProc(controller.pid)
  await api.stream(events, rate)
  // Polled every 20 ms: the tail after the last write is short, and each scrape costs the controller little.
  if (!(await pollUntil(async () => (await counted()) >= seen0 + events, 60_000, 20))) throw new Error(`the controller counted ${(await counted()) - seen0} of ${events} events`)
  const to = sampleProc(controller.pid)
  const seen = (await counted()) - seen0
  const cpuMs = to.cpuMs - from.cpuMs
  const wallMs = to.at - from.at
  const bytesPerEvent = (api.bytes - bytes0) / events
  const microsPerEvent = (cpuMs * 1000) / seen
  const parseMicros = jsonParseMicros(api.sampleLines(Math.min(20_000, n * 2)))

  process.stdout.write(
    `\nRun: ${fmt(n)} pools, ${fmt(seen)} Lease events measured after ${fmt(warmup)} warm-up, offered at ${fmt(rate)}/s, ${fmt(bytesPerEvent)} bytes each; ` +
      `load average ${fmt(loadavg()[0]!, 2)} on ${availableParallelism()} cores\n`,
  )
  printTable('Lease events through ironpool controller (watch bytes → cache → engine)', [
    ['figure', 'value'],
    ['events/s delivered (wall)', fmt((seen * 1000) / wallMs)],
    ['controller CPU, % of a core', fmt((100 * cpuMs) / wallMs, 1)],
    ['controller CPU per event, µs', fmt(microsPerEvent, 2)],
    ['events/s per core (1 / CPU per event)', fmt(1e6 / microsPerEvent)],
    ['bare JSON.parse of the same lines, µs per event (this process)', fmt(parseMicros, 2)],
    ['ratio: controller per event / JSON.parse', fmt(microsPerEvent / parseMicros, 1)],
    ['controller RSS at end, MiB', fmt(to.rssBytes / MiB, 1)],
    ['  of which its own (RssAnon), MiB', to.anonBytes === undefined ? '-' : fmt(to.anonBytes / MiB, 1)],
    ['controller peak RSS, MiB', fmt(to.hwmBytes / MiB, 1)],
  ])
} catch (error) {
  // The controller's last words explain a stalled or closed stream.
  process.stderr.write(`controller log (last lines):\n${controller?.cli.stderr.slice(-15).join('\n') ?? ''}\n`)
  throw error
} finally {
  progress('stopping everything')
  await controller?.stop()
  await api?.close()
  await rm(dir, {recursive: true, force: true})
}
