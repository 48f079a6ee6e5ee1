/**
 * The simulator's command (`npm run sim`): runs seeds and prints, per fault class, the false Unknowns,
 * the dead pools late against their bound, stranded pools, misreported marks, and the worst delay
 * against its bound, each with the seed that shows it. `--seed=N` replays one seed with its trace.
 *
 *   npm run sim [-- --seeds=10000 --from=1 --class=stall]
 *   npm run sim -- --seed=16            # the trace of one seed, then its verdicts
 */
import {formatTable} from '../bench/support/table.ts'
import {parseArgs} from '../bench/support/args.ts'
import {FAULT_CLASSES} from './schedule.ts'
import type {FaultClass} from './faults.ts'
import {clean, runSeed, type SimResult} from './run.ts'

const flags = parseArgs({
  seeds: {default: '200', help: 'how many seeds to run'},
  from: {default: '1', help: 'the first seed'},
  seed: {default: '', help: 'replay this one seed and print its trace'},
  class: {default: '', help: `only faults of this class (${FAULT_CLASSES.join(', ')})`},
})

const only = flags.class === '' ? undefined : (flags.class as FaultClass)
if (only !== undefined && !(FAULT_CLASSES as readonly string[]).includes(only)) throw new Error(`--class=${flags.class}: want one of ${FAULT_CLASSES.join(', ')}`)

if (flags.seed !== '') {
  const seed = Number(flags.seed)
  const result = await runSeed(seed, {only, trace: (line) => process.stdout.write(`${line}\n`)})
  process.stdout.write(`\n${describe(result)}\n`)
  process.exitCode = clean(result) ? 0 : 1
} else {
  const from = Number(flags.from)
  const count = Number(flags.seeds)
  if (!Number.isInteger(from) || !Number.isInteger(count) || count <= 0) throw new Error('--from and --seeds want integers, --seeds > 0')
  const started = performance.now()
  const results: SimResult[] = []
  for (let seed = from; seed < from + count; seed++) {
    const result = await runSeed(seed, {only})
    results.push(result)
    if (!clean(result)) process.stderr.write(`seed ${seed}: ${describe(result)}\n`)
  }
  process.stdout.write(`\n${table(results)}\n\n${results.length} seeds in ${((performance.now() - started) / 1000).toFixed(1)} s (simulated ${(results.reduce((n, r) => n + r.simulatedMs, 0) / 3_600_000).toFixed(1)} h); ${results.filter(clean).length} clean\n`)
  process.exitCode = results.every(clean) ? 0 : 1
}

function describe(r: SimResult): string {
  const parts = [`classes ${r.classes.join('+')}, ${r.pools} pools, ${r.replicas} replica(s)`]
  parts.push(`false Unknowns ${r.falseUnknowns.length}${r.falseUnknowns.length > 0 ? ` (${r.falseUnknowns.slice(0, 5).map((f) => `pool-${f.pool} at ${(f.at / 1000).toFixed(1)} s`).join(', ')})` : ''}`)
  parts.push(`dead ${r.dead.length}, marked ${r.dead.filter((d) => d.markedAt !== undefined).length}, late ${r.late.length}${r.late.length > 0 ? ` (${r.late.slice(0, 5).map((d) => `pool-${d.pool} died ${(d.diedAt / 1000).toFixed(1)} s, bound ${((d.boundAt - d.diedAt) / 1000).toFixed(1)} s, marked ${d.markedAt === undefined ? 'never' : `after ${((d.markedAt - d.diedAt) / 1000).toFixed(1)} s`}`).join('; ')})` : ''}`)
  parts.push(`stranded ${r.stranded.length}${r.stranded.length > 0 ? ` (${r.stranded.slice(0, 5).map((s) => `${s.pool} at ${(s.at / 1000).toFixed(1)} s`).join(', ')})` : ''}`)
  parts.push(`misreported ${r.misreported.length}${r.misreported.length > 0 ? ` (${JSON.stringify(r.misreported.slice(0, 3))})` : ''}`)
  parts.push(`replica restarts ${r.restarts}, leaderships lost ${r.losses}`)
  return parts.join('; ')
}

function table(results: SimResult[]): string {
  const rows = [['class', 'seeds', 'false Unknowns', 'seeds with any', 'late', 'stranded', 'misreported', 'dead marked', 'worst delay / bound', 'worst seed']]
  const classes = [...FAULT_CLASSES, 'all'] as const
  for (const cls of classes) {
    const runs = results.filter((r) => cls === 'all' || r.classes.includes(cls))
    if (runs.length === 0) continue
    const falseU = runs.reduce((n, r) => n + r.falseUnknowns.length, 0)
    const bad = runs.filter((r) => !clean(r))
    let worst = {ratio: 0, delay: 0, bound: 0, seed: 0}
    for (const r of runs) {
      for (const d of r.dead) {
        if (d.markedAt === undefined) continue
        const ratio = (d.markedAt - d.diedAt) / (d.boundAt - d.diedAt)
        if (ratio > worst.ratio) worst = {ratio, delay: d.markedAt - d.diedAt, bound: d.boundAt - d.diedAt, seed: r.seed}
      }
    }
    const dead = runs.reduce((n, r) => n + r.dead.length, 0)
    const marked = runs.reduce((n, r) => n + r.dead.filter((d) => d.markedAt !== undefined).length, 0)
    rows.push([
      cls,
      String(runs.length),
      String(falseU),
      String(runs.filter((r) => r.falseUnknowns.length > 0).length),
      String(runs.reduce((n, r) => n + r.late.length, 0)),
      String(runs.reduce((n, r) => n + r.stranded.length, 0)),
      String(runs.reduce((n, r) => n + r.misreported.length, 0)),
      `${marked}/${dead}`,
      worst.bound === 0 ? '-' : `${(worst.delay / 1000).toFixed(1)} s / ${(worst.bound / 1000).toFixed(1)} s`,
      bad[0] === undefined ? (worst.seed === 0 ? '-' : String(worst.seed)) : String(bad[0].seed),
    ])
  }
  return formatTable(rows)
}
