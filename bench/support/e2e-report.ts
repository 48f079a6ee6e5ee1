/** The controller bench's tables: processes per phase, delay to Unknown three ways, correctness counts. */
import type {ProcSample} from './proc.ts'
import {cpuShare, MiB} from './proc.ts'
import {total, type Sample} from './prom-text.ts'
import {summary} from './stats.ts'
import {fmt, printTable} from './table.ts'

type Procs = Record<'controller' | 'apiserver' | 'etcd' | 'bench', ProcSample>

export interface Phase {
  name: string
  from: Procs
  to: Procs
}

export interface E2eResult {
  run: string
  phases: Phase[]
  steadyPoolWrites: number
  steadyMarked: number
  stopped: readonly string[]
  allMarked: boolean
  /** Date.now() when the bench's watch first saw each pool Unknown. */
  watchUnknownAt: ReadonlyMap<string, number>
  /** Date.now() of each Lease's last acknowledged renewal. */
  lastAck: ReadonlyMap<string, number>
  graceMs: number
  /** The longest time between two answered renewals of a renewed Lease: false Unknowns are only false below the grace period. */
  maxGapMs: number
  controllerMarks: {pool: string; delayMs: number}[]
  metrics: Sample[]
}

const LABELS: Record<keyof Procs, string> = {
  controller: 'ironpool controller',
  apiserver: 'kube-apiserver',
  etcd: 'etcd',
  bench: 'bench (load generator + watch)',
}

export function report(result: E2eResult): void {
  process.stdout.write(`\nRun: ${result.run}\n`)
  const procRows = [['process', ...result.phases.map((p) => `CPU % of a core, ${p.name}`), 'RSS MiB at end', 'of which own (RssAnon)', 'peak RSS MiB']]
  for (const key of Object.keys(LABELS) as (keyof Procs)[]) {
    const last = result.phases.at(-1)!.to[key]
    procRows.push([LABELS[key], ...result.phases.map((p) => fmt(cpuShare(p.from[key], p.to[key]), 1)), fmt(last.rssBytes / MiB, 1), last.anonBytes === undefined ? '-' : fmt(last.anonBytes / MiB, 1), key === 'bench' ? '-' : fmt(last.hwmBytes / MiB, 1)])
  }
  printTable('Processes (CPU from /proc/<pid>/stat utime+stime over the phase; RSS from /proc/<pid>/status)', procRows)

  const stopped = new Set(result.stopped)
  const fromLog = result.controllerMarks.filter((m) => stopped.has(m.pool)).map((m) => m.delayMs)
  const fromWatch = result.stopped.flatMap((name) => {
    const seen = result.watchUnknownAt.get(name)
    const ack = result.lastAck.get(name)
    return seen === undefined || ack === undefined ? [] : [seen - (ack + result.graceMs)]
  })
  const count = total(result.metrics, 'ironpool_controller_unknown_write_delay_seconds_count')
  const sum = total(result.metrics, 'ironpool_controller_unknown_write_delay_seconds_sum')
  const p99Bucket = histogramBound(result.metrics, 'ironpool_controller_unknown_write_delay_seconds_bucket', 0.99)
  const row = (label: string, values: number[]) => {
    const s = summary(values)
    return [label, fmt(s.n), fmt(s.min), fmt(s.p50), fmt(s.p99), fmt(s.max)]
  }
  printTable('Delay from a stopped pool\'s deadline to its Ready=Unknown, ms', [
    ['source', 'pools', 'min', 'p50', 'p99', 'max'],
    row("controller's log (its own deadline → write answered)", fromLog),
    row('bench (last renewal answered + grace → Unknown seen on watch)', fromWatch),
    ["controller's histogram (count; mean; p99 ≤ bucket)", fmt(count), '-', `mean ${fmt((1000 * sum) / count)}`, `≤ ${fmt(p99Bucket * 1000)}`, '-'],
  ])

  const falseUnknown = [...result.watchUnknownAt.keys()].filter((name) => !stopped.has(name))
  printTable('Correctness', [
    ['figure', 'value', 'want'],
    ['stopped pools seen Unknown', `${result.stopped.filter((n) => result.watchUnknownAt.has(n)).length} of ${result.stopped.length}`, 'all'],
    ['longest gap between renewals of a renewed Lease, ms (run valid only below grace)', fmt(result.maxGapMs), `< ${fmt(result.graceMs)}`],
    ['false Unknowns (renewed pools seen Unknown)', fmt(falseUnknown.length), '0'],
    ['pool writes in steady window (watch MODIFIED events)', fmt(result.steadyPoolWrites), '0'],
    ['pools marked in steady window (controller counter)', fmt(result.steadyMarked), '0'],
    ['pools marked in all (controller counter)', fmt(total(result.metrics, 'ironpool_controller_pools_marked_unknown_total')), String(result.stopped.length)],
    ['lease events seen by the controller', fmt(total(result.metrics, 'ironpool_controller_lease_events_total')), '-'],
  ])
  if (falseUnknown.length > 0) process.stdout.write(`false Unknowns: ${falseUnknown.slice(0, 20).join(', ')}\n`)
  if (!result.allMarked) process.stdout.write('NOT every stopped pool was marked before the timeout\n')
}

/** The upper bound of the histogram bucket the quantile falls in (cumulative buckets, as Prometheus). */
function histogramBound(samples: readonly Sample[], name: string, quantile: number): number {
  const buckets = samples.filter((s) => s.name === name).map((s) => ({le: Number(s.labels.le), count: s.value})).sort((a, b) => a.le - b.le)
  const all = buckets.at(-1)?.count ?? 0
  return buckets.find((b) => b.count >= quantile * all)?.le ?? NaN
}
