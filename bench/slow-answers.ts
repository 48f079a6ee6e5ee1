/**
 * Issue 26's slow-answers target on the simulator (production classes, production timings): N pools
 * of which D die at once, every answer of the API taking the given latency (nothing fails). Prints
 * the time from the death to the last dead pool's mark, against the grace period, and the false
 * Unknowns. Simulated time: the figures do not depend on the machine's load.
 *
 *   npm run bench:slow-answers [-- --pools=1200 --dead=1000 --latency=1s]
 */
import {parseArgs, durationMs, positiveInt} from './support/args.ts'
import {printTable} from './support/table.ts'
import {runSeed, SIM_TIMINGS} from '../sim/run.ts'
import type {Scenario} from '../sim/schedule.ts'

const flags = parseArgs({
  pools: {default: '1200', help: 'pools in all'},
  dead: {default: '1000,10000', help: 'comma-separated: how many die at once (each run with max(pools, dead + 200) pools)'},
  latency: {default: '1s', help: 'every answer takes this long'},
  seeds: {default: '1', help: 'runs per figure'},
})

const rows = [['pools', 'dead', 'latency', 'seed', 'last mark after death', 'grace + ...', 'false Unknowns', 'marked']]
const latencyMs = durationMs('latency', flags.latency)
for (const dead of flags.dead.split(',').map((d) => positiveInt('dead', d))) {
  const pools = Math.max(positiveInt('pools', flags.pools), dead + 200)
  for (let seed = 1; seed <= positiveInt('seeds', flags.seeds); seed++) {
    const deathAt = 120_000
    const scenario: Scenario = {
      seed,
      pools,
      replicas: 1,
      durationMs: deathAt + 8 * 60_000,
      classes: ['slow'],
      faults: [{class: 'slow', start: 0, end: Number.MAX_SAFE_INTEGER, latencyMs}],
      deaths: Array.from({length: dead}, (_, i) => ({pool: i, at: deathAt})),
      recreations: [],
    }
    const r = await runSeed(seed, {scenario})
    const marks = r.dead.map((d) => d.markedAt).filter((t): t is number => t !== undefined)
    const last = marks.length === r.dead.length ? Math.max(...marks) - deathAt : undefined
    rows.push([
      String(pools),
      String(dead),
      `${latencyMs} ms`,
      String(seed),
      last === undefined ? `${r.dead.length - marks.length} unmarked` : `${(last / 1000).toFixed(1)} s`,
      last === undefined ? '-' : `${((last - SIM_TIMINGS.gracePeriodMs) / 1000).toFixed(1)} s`,
      String(r.falseUnknowns.length),
      `${marks.length}/${r.dead.length}`,
    ])
  }
}
printTable('Slow answers: every dead pool marked (simulated time, production classes and timings)', rows)
