/**
 * The heartbeat's own load on the control plane (issue 27): what kube-apiserver and etcd spend per Lease
 * renewal. N Leases (no pools, no controller) in the machine pools' Lease namespace, renewed by the
 * bench's load generator (support/lease-load.ts: JSON merge patches of spec.renewTime over keep-alive
 * connections, spread evenly over the interval) at each rate of --rates in turn (rate = N / interval),
 * with --watchers Lease watches open on the namespace (the controller's watch fan-out; the bench reads
 * their bytes and counts events without decoding them). Per rate: a warm-up, then a --window over which
 * it prints renewals/s achieved, round-trip p50/p99, CPU (% of a core and µs per renewal) of
 * kube-apiserver, etcd and the generator itself (it shares the machine), their RSS, etcd's Raft
 * proposals, fsyncs, bytes written and db size growth per renewal, the whole machine's busy cores and the
 * load average; first an --idle window with no renewal, whose CPU is taken off each rate's for the
 * marginal cost of a renewal ("above idle"). Stops at the first rate the generator or the plane cannot keep up with, and says which.
 * Figures only, no assertions; everything started is stopped in `finally`.
 *
 * The plane's etcd runs with --unsafe-no-fsync (tests need not survive a power cut); --fsync=on runs it
 * with fsync, as production does, to see the write path's real cost on this disk. --leases-etcd=separate
 * puts the Leases in an etcd of their own through kube-apiserver's --etcd-servers-overrides, as large
 * clusters do for Events: the etcd columns are then that etcd's, and the plane's own etcd is shown beside.
 * --second-apiserver=on starts another kube-apiserver on the same etcd that no client talks to: its CPU
 * per renewal is what each replica pays for a renewal another replica served (its watch cache).
 */
import https from 'node:https'
import {readFileSync} from 'node:fs'
import {mkdtemp, rm} from 'node:fs/promises'
import {availableParallelism, loadavg, tmpdir} from 'node:os'
import path from 'node:path'
import {KubeConfig} from '@kubernetes/client-node'
import {ensureBinaries} from '../src/controlplane/binaries.ts'
import {apiServerArgs, etcdArgs} from '../src/controlplane/component-args.ts'
import type {ControlPlane} from '../src/controlplane/control-plane.ts'
import {httpGet} from '../src/controlplane/http-get.ts'
import {freePort, ManagedProcess} from '../src/controlplane/process.ts'
import {formatMicroTime} from '../src/core/conditions.ts'
import {formatDuration} from '../src/core/durations.ts'
import {POOL_KINDS} from '../src/core/pool-kinds.ts'
import {durationMs, parseArgs, positiveInt} from './support/args.ts'
import {KeepAliveApi} from './support/keepalive-api.ts'
import {LeaseLoad} from './support/lease-load.ts'
import {delay, forEachLimit, pollUntil} from './support/limit.ts'
import {progress, startBenchPlane} from './support/plane.ts'
import {MiB, sampleProc, type ProcSample} from './support/proc.ts'
import {parseProm, total} from './support/prom-text.ts'
import {summary} from './support/stats.ts'
import {fmt, printTable} from './support/table.ts'

const flags = parseArgs({
  leases: {default: '5000', help: 'Leases renewed (one per pool)'},
  rates: {default: '100,250,500,1000,2000', help: 'renewals per second, one window each, in this order (interval = leases / rate)'},
  warmup: {default: '10s', help: 'before each window: connections open, the schedule spread'},
  window: {default: '30s', help: 'the measured window at each rate'},
  idle: {default: '15s', help: 'a window with no renewal first: the plane\'s own CPU, taken off each rate\'s for the marginal cost per renewal'},
  watchers: {default: '1', help: 'Lease watches open on the namespace (0 for none)'},
  concurrency: {default: '64', help: 'renewals in flight at most'},
  fsync: {default: 'off', help: "'on': etcd fsyncs its WAL and db as in production (the plane's default is --unsafe-no-fsync)"},
  'second-apiserver': {default: 'off', help: "'on': a second kube-apiserver on the same etcd that no client talks to: what every replica pays per renewal (its watch cache decodes every change)"},
  'leases-etcd': {default: 'shared', help: "'separate': Leases in an etcd of their own (kube-apiserver --etcd-servers-overrides=coordination.k8s.io/leases#...), the other etcd's CPU shown beside"},
})
const n = positiveInt('leases', flags.leases)
const rates = flags.rates.split(',').map((r) => positiveInt('rates', r))
const warmupMs = durationMs('warmup', flags.warmup)
const windowMs = durationMs('window', flags.window)
const idleMs = durationMs('idle', flags.idle)
const watchers = flags.watchers === '0' ? 0 : positiveInt('watchers', flags.watchers)
const concurrency = positiveInt('concurrency', flags.concurrency)
if (flags.fsync !== 'on' && flags.fsync !== 'off') throw new Error(`--fsync=${flags.fsync}: want on or off`)
const fsync = flags.fsync === 'on'
if (flags['leases-etcd'] !== 'shared' && flags['leases-etcd'] !== 'separate') throw new Error(`--leases-etcd=${flags['leases-etcd']}: want shared or separate`)
const separateEtcd = flags['leases-etcd'] === 'separate'
if (flags['second-apiserver'] !== 'on' && flags['second-apiserver'] !== 'off') throw new Error(`--second-apiserver=${flags['second-apiserver']}: want on or off`)
const secondApiServer = flags['second-apiserver'] === 'on'
const etcdExtraArgs = fsync ? ['--unsafe-no-fsync=false'] : []
const namespace = POOL_KINDS.machine.leaseNamespace
const names = Array.from({length: n}, (_, i) => `hb-${String(i).padStart(6, '0')}`)
/** A window kept up when at least this share of the target rate was answered... */
const KEPT_UP_SHARE = 0.97
/** ...and no more than this many seconds of renewals were overdue at its end. */
const BACKLOG_SECONDS = 0.5

/**
 * A Lease watch whose events are counted (one JSON line each) and not decoded: the bench's cost per
 * event stays small, while kube-apiserver encodes and sends each event as it would to the controller.
 */
class CountingWatch {
  events = 0
  bytes = 0
  ended = 0
  private request: ReturnType<typeof https.get> | undefined
  private closed = false
  private readonly kubeConfig: KubeConfig
  private readonly path: string

  constructor(kubeConfig: KubeConfig, path: string) {
    this.kubeConfig = kubeConfig
    this.path = path
  }

  async start(): Promise<void> {
    const list = await this.get(`${this.path}?limit=1`)
    const resourceVersion = (JSON.parse(list) as {metadata: {resourceVersion: string}}).metadata.resourceVersion
    this.open(resourceVersion)
  }

  close(): void {
    this.closed = true
    this.request?.destroy()
  }

  private open(resourceVersion: string): void {
    this.request = https.get(this.url(`${this.path}?watch=1&allowWatchBookmarks=true&timeoutSeconds=3600&resourceVersion=${resourceVersion}`), this.tls(), (response) => {
      response.on('data', (chunk: Buffer) => {
        this.bytes += chunk.length
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) this.events++
      })
      response.on('end', () => {
        // Not reopened: a watch that ends during a window shows as fewer events than renewals.
        if (!this.closed) this.ended++
      })
    })
    this.request.on('error', () => {
      if (!this.closed) this.ended++
    })
  }

  private get(path: string): Promise<string> {
    return new Promise((resolve, reject) => {
      https
        .get(this.url(path), this.tls(), (response) => {
          let body = ''
          response.on('data', (chunk: Buffer) => (body += chunk.toString()))
          response.on('end', () => (response.statusCode === 200 ? resolve(body) : reject(new Error(`GET ${path}: HTTP ${response.statusCode}: ${body}`))))
        })
        .on('error', reject)
    })
  }

  private url(path: string): string {
    return `${this.kubeConfig.getCurrentCluster()!.server}${path}`
  }

  private tls(): https.RequestOptions {
    const user = this.kubeConfig.getCurrentUser()!
    const b64 = (data: string | undefined) => Buffer.from(data ?? '', 'base64')
    return {ca: b64(this.kubeConfig.getCurrentCluster()!.caData), cert: b64(user.certData), key: b64(user.keyData)}
  }
}

interface EtcdFigures {
  dbBytes: number
  dbInUseBytes: number
  proposals: number
  walFsyncs: number
  walFsyncSeconds: number
  backendCommits: number
  /** Bytes etcd passed to write() (WAL and bbolt), from /proc/<pid>/io. */
  writtenBytes: number
}

async function etcdFigures(url: string, pid: number): Promise<EtcdFigures> {
  const samples = parseProm((await httpGet(`${url}/metrics`)).body)
  const io = readFileSync(`/proc/${pid}/io`, 'utf8')
  return {
    dbBytes: total(samples, 'etcd_mvcc_db_total_size_in_bytes'),
    dbInUseBytes: total(samples, 'etcd_mvcc_db_total_size_in_use_in_bytes'),
    proposals: total(samples, 'etcd_server_proposals_committed_total'),
    walFsyncs: total(samples, 'etcd_disk_wal_fsync_duration_seconds_count'),
    walFsyncSeconds: total(samples, 'etcd_disk_wal_fsync_duration_seconds_sum'),
    backendCommits: total(samples, 'etcd_disk_backend_commit_duration_seconds_count'),
    writtenBytes: Number(/^wchar:\s+(\d+)/m.exec(io)?.[1] ?? NaN),
  }
}

/** The whole machine's busy CPU time, ms (all cores; /proc/stat's first line, idle and iowait excluded). */
function machineBusyMs(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const [user, nice, system, , , irq, softirq, steal] = fields as [number, number, number, number, number, number, number, number]
  return ((user + nice + system + irq + softirq + steal) * 1000) / 100
}

function benchSample(): ProcSample {
  const usage = process.cpuUsage()
  const memory = process.memoryUsage()
  return {at: performance.now(), cpuMs: (usage.user + usage.system) / 1000, rssBytes: memory.rss, hwmBytes: memory.rss}
}

interface Row {
  rate: number
  intervalMs: number
  achieved: number
  p50: number
  p99: number
  maxLagMs: number
  backlog: number
  failures: number
  apiCpu: number
  etcdCpu: number
  /** With --leases-etcd=separate: the plane's own etcd (everything but Leases). */
  otherEtcdCpu: number
  /** With --second-apiserver=on: the idle replica's CPU share and µs per renewal above its idle. */
  replicaCpu: number
  replicaMarginalUs: number
  benchCpu: number
  machineCores: number
  apiUsPer: number
  etcdUsPer: number
  /** CPU per renewal above the idle window's (µs): what one more renewal costs. */
  apiMarginalUs: number
  etcdMarginalUs: number
  benchUsPer: number
  apiRss: number
  etcdRss: number
  proposalsPer: number
  fsyncsPer: number
  /** Mean WAL fsync over the window, ms (NaN without fsync). */
  fsyncMs: number
  writtenPer: number
  dbGrowth: number
  dbGrowthPer: number
  dbBytes: number
  watchEventsPerS: number
  load: [number, number]
  keptUp: boolean
}

let plane: ControlPlane | undefined
let leasesEtcd: {process: ManagedProcess; dir: string; url: string} | undefined
let replica: ManagedProcess | undefined
let load: LeaseLoad | undefined
const watches: CountingWatch[] = []
const rows: Row[] = []
let verdict = `kept up with every rate asked for (${rates.join(', ')}/s)`
try {
  progress(`control plane (etcd ${fsync ? 'with fsync' : 'with --unsafe-no-fsync, as the plane runs it'}); ${n} Leases, ${watchers} watchers, rates ${rates.join(', ')}/s`)
  if (separateEtcd) {
    const etcdBinary = (await ensureBinaries({progress: (line) => process.stderr.write(`${line}\n`)})).etcd
    const dir = await mkdtemp(path.join(tmpdir(), 'ironpool-hb-etcd-'))
    const url = `http://127.0.0.1:${await freePort()}`
    const peer = `http://127.0.0.1:${await freePort()}`
    leasesEtcd = {process: new ManagedProcess({name: 'etcd (leases)', command: etcdBinary, args: [...etcdArgs(dir, url, peer), ...etcdExtraArgs], logFile: path.join(dir, 'etcd.log')}), dir, url}
    leasesEtcd.process.start()
    if (!(await pollUntil(async () => (await httpGet(`${url}/health`).catch(() => ({status: 0}))).status === 200, 30_000, 200))) throw new Error('the Leases etcd did not start')
    progress(`Leases in their own etcd at ${url}`)
  }
  plane = await startBenchPlane({
    etcdArgs: etcdExtraArgs,
    apiServerArgs: leasesEtcd === undefined ? [] : [`--etcd-servers-overrides=coordination.k8s.io/leases#${leasesEtcd.url}`],
  })
  const admin = new KubeConfig()
  admin.loadFromFile(plane.adminKubeconfig)
  const [planeEtcdPid, apiPid] = plane.pids as [number, number]
  // The etcd that holds the Leases: its figures are the etcd columns.
  const etcdPid = leasesEtcd?.process.pid ?? planeEtcdPid
  const etcdUrl = leasesEtcd?.url ?? plane.etcdUrl
  if (secondApiServer) {
    // The same flags, certificates and service account keys as the plane's kube-apiserver, another port.
    const port = await freePort()
    const extra = leasesEtcd === undefined ? [] : [`--etcd-servers-overrides=coordination.k8s.io/leases#${leasesEtcd.url}`]
    replica = new ManagedProcess({name: 'kube-apiserver (replica)', command: plane.binaries['kube-apiserver'], args: apiServerArgs(path.join(plane.dir, 'pki'), port, plane.etcdUrl, extra), logFile: path.join(plane.dir, 'kube-apiserver-replica.log')})
    replica.start()
    // /readyz is open to anonymous requests (system:public-info-viewer).
    const tls = {ca: plane.caPem, cert: '', key: ''}
    if (!(await pollUntil(async () => (await httpGet(`https://127.0.0.1:${port}/readyz`, tls).catch(() => ({status: 0}))).status === 200, 60_000, 500))) {
      throw new Error('the second kube-apiserver did not become ready')
    }
    progress(`a second kube-apiserver on port ${port}, no client`)
  }
  const replicaPid = replica?.pid

  progress(`seeding ${n} Leases in ${namespace}`)
  const seeder = new KeepAliveApi(admin, 32)
  try {
    const leasesPath = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`
    await forEachLimit(names, 32, async (name) => {
      const now = formatMicroTime(new Date())
      const spec = {holderIdentity: `${name}_bench`, leaseDurationSeconds: 40, acquireTime: now, renewTime: now}
      await seeder.request('POST', leasesPath, {apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: {name, namespace}, spec}, 'application/json')
    })
  } finally {
    seeder.close()
  }
  for (let i = 0; i < watchers; i++) {
    const watch = new CountingWatch(admin, `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`)
    await watch.start()
    watches.push(watch)
  }

  const sampleAll = () => ({
    api: sampleProc(apiPid),
    etcd: sampleProc(etcdPid),
    otherEtcd: sampleProc(planeEtcdPid),
    replica: replicaPid === undefined ? undefined : sampleProc(replicaPid),
    bench: benchSample(),
    machineMs: machineBusyMs(),
    at: performance.now(),
  })
  progress(`idle window (no renewal, ${watchers} watchers open), ${formatDuration(idleMs)}`)
  await delay(2_000)
  const idle0 = {procs: sampleAll(), load: loadavg()[0]!}
  await delay(idleMs)
  const idle1 = {procs: sampleAll(), load: loadavg()[0]!}
  const idleSeconds = (idle1.procs.at - idle0.procs.at) / 1000
  /** Idle CPU, ms per second. */
  const idleApi = (idle1.procs.api.cpuMs - idle0.procs.api.cpuMs) / idleSeconds
  const idleEtcd = (idle1.procs.etcd.cpuMs - idle0.procs.etcd.cpuMs) / idleSeconds
  const idleOtherEtcd = (idle1.procs.otherEtcd.cpuMs - idle0.procs.otherEtcd.cpuMs) / idleSeconds
  const idleReplica = ((idle1.procs.replica?.cpuMs ?? 0) - (idle0.procs.replica?.cpuMs ?? 0)) / idleSeconds
  const idleMachine = (idle1.procs.machineMs - idle0.procs.machineMs) / (1000 * idleSeconds)
  for (const rate of rates) {
    const intervalMs = (n * 1000) / rate
    progress(`${rate} renewals/s (each Lease every ${formatDuration(Math.round(intervalMs))}): warm-up ${formatDuration(warmupMs)}, window ${formatDuration(windowMs)}`)
    load = new LeaseLoad({kubeConfig: admin, namespace, names, intervalMs, concurrency, recordLatency: true})
    load.start()
    await delay(warmupMs)
    load.resetLag()
    const load0 = loadavg()[0]!
    const r0 = {renewals: load.renewals, failures: load.failures, events: watches.reduce((sum, w) => sum + w.events, 0), procs: sampleAll(), etcd: await etcdFigures(etcdUrl, etcdPid)}
    await delay(windowMs)
    const r1 = {renewals: load.renewals, failures: load.failures, events: watches.reduce((sum, w) => sum + w.events, 0), procs: sampleAll(), etcd: await etcdFigures(etcdUrl, etcdPid)}
    const backlog = load.backlog()
    const inFlight = load.inFlightNow
    const latency = summary(load.latenciesMs)
    const maxLagMs = load.maxLagMs
    await load.close()
    load = undefined

    const seconds = (r1.procs.at - r0.procs.at) / 1000
    const renewals = r1.renewals - r0.renewals
    const cpuMs = (key: 'api' | 'etcd' | 'otherEtcd' | 'bench') => r1.procs[key].cpuMs - r0.procs[key].cpuMs
    const per = (value: number) => (renewals > 0 ? value / renewals : NaN)
    const replicaMs = (r1.procs.replica?.cpuMs ?? NaN) - (r0.procs.replica?.cpuMs ?? NaN)
    const row: Row = {
      rate,
      intervalMs,
      achieved: renewals / seconds,
      p50: latency.p50,
      p99: latency.p99,
      maxLagMs,
      backlog,
      failures: r1.failures - r0.failures,
      apiCpu: cpuMs('api') / (10 * seconds),
      etcdCpu: cpuMs('etcd') / (10 * seconds),
      otherEtcdCpu: separateEtcd ? cpuMs('otherEtcd') / (10 * seconds) : NaN,
      replicaCpu: replicaMs / (10 * seconds),
      replicaMarginalUs: per((replicaMs - idleReplica * seconds) * 1000),
      benchCpu: cpuMs('bench') / (10 * seconds),
      machineCores: (r1.procs.machineMs - r0.procs.machineMs) / (1000 * seconds),
      apiUsPer: per(cpuMs('api') * 1000),
      etcdUsPer: per(cpuMs('etcd') * 1000),
      apiMarginalUs: per((cpuMs('api') - idleApi * seconds) * 1000),
      etcdMarginalUs: per((cpuMs('etcd') - idleEtcd * seconds) * 1000),
      benchUsPer: per(cpuMs('bench') * 1000),
      apiRss: r1.procs.api.rssBytes,
      etcdRss: r1.procs.etcd.rssBytes,
      proposalsPer: per(r1.etcd.proposals - r0.etcd.proposals),
      fsyncsPer: per(r1.etcd.walFsyncs - r0.etcd.walFsyncs),
      fsyncMs: (1000 * (r1.etcd.walFsyncSeconds - r0.etcd.walFsyncSeconds)) / (r1.etcd.walFsyncs - r0.etcd.walFsyncs),
      writtenPer: per(r1.etcd.writtenBytes - r0.etcd.writtenBytes),
      dbGrowth: r1.etcd.dbBytes - r0.etcd.dbBytes,
      dbGrowthPer: per(r1.etcd.dbInUseBytes - r0.etcd.dbInUseBytes),
      dbBytes: r1.etcd.dbBytes,
      watchEventsPerS: watchers > 0 ? (r1.events - r0.events) / (watchers * seconds) : 0,
      load: [load0, loadavg()[0]!],
      keptUp: renewals / seconds >= KEPT_UP_SHARE * rate && backlog <= BACKLOG_SECONDS * rate,
    }
    rows.push(row)
    progress(
      `  ${fmt(row.achieved)}/s, p50 ${fmt(row.p50, 1)} ms p99 ${fmt(row.p99, 1)} ms, apiserver ${fmt(row.apiCpu)} % (${fmt(row.apiUsPer)} µs), etcd ${fmt(row.etcdCpu)} % (${fmt(row.etcdUsPer)} µs), generator ${fmt(row.benchCpu)} %, machine ${fmt(row.machineCores, 2)} cores, load ${fmt(row.load[0], 2)} → ${fmt(row.load[1], 2)}`,
    )
    if (!row.keptUp) {
      // Whose limit: a generator near a whole core (one Node thread) cannot send more; otherwise the
      // renewals waited on the plane (in flight at the cap, or answers slow), on cores it shares.
      const who =
        row.benchCpu >= 85
          ? `the load generator (${fmt(row.benchCpu)} % of a core, one thread)`
          : `the plane (${inFlight} of ${concurrency} renewals in flight at the end, p99 ${fmt(row.p99)} ms; kube-apiserver ${fmt(row.apiCpu)} % + etcd ${fmt(row.etcdCpu)} % of a core, the machine ${fmt(row.machineCores, 2)} of ${availableParallelism()} cores busy)`
      verdict = `fell behind at ${rate}/s: ${fmt(row.achieved)}/s answered, ${backlog} renewals overdue at the end of the window; the limit: ${who}`
      break
    }
  }

  const loadCell = (row: Row) => `${fmt(row.load[0], 2)}→${fmt(row.load[1], 2)}`
  printTable(
    `${n} Leases, ${watchers} Lease watchers, concurrency ${concurrency}, window ${formatDuration(windowMs)} after ${formatDuration(warmupMs)} warm-up; etcd ${fsync ? 'with fsync' : '--unsafe-no-fsync'}${separateEtcd ? ', Leases in an etcd of their own' : ''}${secondApiServer ? ', a second kube-apiserver that no client uses' : ''}; ${availableParallelism()} cores shared with whatever else runs (machine column: all processes)`,
    [
      ['target/s', 'interval', 'achieved/s', 'p50 ms', 'p99 ms', 'max lag ms', 'failed', 'apiserver %', 'µs/renewal', 'above idle', separateEtcd ? 'leases etcd %' : 'etcd %', 'µs/renewal', 'above idle', ...(separateEtcd ? ['other etcd %'] : []), ...(secondApiServer ? ['idle replica %', 'µs/renewal above idle'] : []), 'generator %', 'µs/renewal', 'machine cores', 'load avg'],
      ['idle', '', '0', '', '', '', '', fmt(idleApi / 10, 1), '', '', fmt(idleEtcd / 10, 1), '', '', ...(separateEtcd ? [fmt(idleOtherEtcd / 10, 1)] : []), ...(secondApiServer ? [fmt(idleReplica / 10, 1), ''] : []), '', '', fmt(idleMachine, 2), `${fmt(idle0.load, 2)}→${fmt(idle1.load, 2)}`],
      ...rows.map((r) => [
        fmt(r.rate),
        formatDuration(Math.round(r.intervalMs)),
        fmt(r.achieved),
        fmt(r.p50, 1),
        fmt(r.p99, 1),
        fmt(r.maxLagMs),
        fmt(r.failures),
        fmt(r.apiCpu, 1),
        fmt(r.apiUsPer),
        fmt(r.apiMarginalUs),
        fmt(r.etcdCpu, 1),
        fmt(r.etcdUsPer),
        fmt(r.etcdMarginalUs),
        ...(separateEtcd ? [fmt(r.otherEtcdCpu, 1)] : []),
        ...(secondApiServer ? [fmt(r.replicaCpu, 1), fmt(r.replicaMarginalUs)] : []),
        fmt(r.benchCpu, 1),
        fmt(r.benchUsPer),
        fmt(r.machineCores, 2),
        loadCell(r),
      ]),
    ],
  )
  printTable('Memory, etcd write path and watch fan-out over each window', [
    ['target/s', 'apiserver RSS MiB', 'etcd RSS MiB', 'proposals/renewal', 'WAL fsyncs/renewal', 'fsync mean ms', 'etcd bytes written/renewal', 'db in use +B/renewal', 'db size growth MiB', 'db size MiB', 'events/s per watcher'],
    ...rows.map((r) => [
      fmt(r.rate),
      fmt(r.apiRss / MiB, 1),
      fmt(r.etcdRss / MiB, 1),
      fmt(r.proposalsPer, 2),
      fmt(r.fsyncsPer, 3),
      Number.isFinite(r.fsyncMs) ? fmt(r.fsyncMs, 2) : '-',
      fmt(r.writtenPer),
      fmt(r.dbGrowthPer),
      fmt(r.dbGrowth / MiB, 1),
      fmt(r.dbBytes / MiB, 1),
      fmt(r.watchEventsPerS),
    ]),
  ])
  const ended = watches.reduce((sum, w) => sum + w.ended, 0)
  process.stdout.write(`\n${verdict}.${ended > 0 ? ` ${ended} watch(es) ended early and were not reopened.` : ''}\n`)
} finally {
  progress('stopping everything')
  for (const watch of watches) watch.close()
  await load?.close()
  await replica?.stop()
  await plane?.stop()
  await leasesEtcd?.process.stop()
  if (leasesEtcd !== undefined) await rm(leasesEtcd.dir, {recursive: true, force: true})
}
