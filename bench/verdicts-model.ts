/**
 * Issue 18's model as a bench: the production classes wired as src/app/kind-controller.ts wires them
 * (kindEngine: the Sight at the production timings, the view, the engine, the request limiter), on the
 * fake clock, grace 50 s; each probe and confirming read fails at random with probability f (seeded).
 * Dead pools stop renewing at 60 s; live pools renew every 10 s throughout. Prints, per run, the time
 * from the death until every dead pool is Ready=Unknown, how many were marked, the false Unknowns
 * (live pools marked), the blind spells and the requests made. Figures are simulated time: they do not
 * depend on the machine's load.
 *
 *   npm run bench:verdicts [-- --runs=1000:0,1000:0.01,1000:0.02,1000:0.05,100:0.05 --live=1000 --seeds=3 --max=6h]
 */
import {DEFAULT_REQUEST_LIMITS, RequestLimiter} from '../src/core/lifecycle/request-limiter.ts'
import {kindEngine} from '../src/core/lifecycle/kind-engine.ts'
import {Sight, sightTimings} from '../src/core/lifecycle/sight/sight.ts'
import {durationMs, parseArgs, positiveInt} from './support/args.ts'
import {quietEvents, quietLogger} from './support/quiet.ts'
import {fmt, printTable} from './support/table.ts'
import {GRACE_MS, KIND, runModel, type ModelApi, type ModelEngine, type ModelRun} from './support/verdicts-sim.ts'

const flags = parseArgs({
  runs: {default: '1000:0,1000:0.01,1000:0.02,1000:0.05,100:0.05', help: 'comma-separated dead-pools:failure-rate pairs'},
  live: {default: '1000', help: 'live pools beside the dead ones (renewing every 10 s)'},
  seeds: {default: '3', help: 'runs per pair, seeds 1..n'},
  max: {default: '6h', help: 'simulated time limit of a run'},
})

/** The wiring of src/app/kind-controller.ts and src/app/controller.ts, with the model's API. */
function wire(api: ModelApi): ModelEngine {
  const timings = sightTimings(GRACE_MS)
  const sight = new Sight({clock: api.clock, logger: quietLogger, probe: api.probe, ...timings})
  let spells = 0
  const {lifecycle, cacheState} = kindEngine({
    kind: KIND,
    clock: api.clock,
    sight,
    caches: ['pools', 'leases'],
    limiter: new RequestLimiter(api.clock, DEFAULT_REQUEST_LIMITS),
    store: api.store,
    getPool: api.getPool,
    getLease: api.getLease,
    confirmLease: api.confirmLease,
    confirmTimeoutMs: timings.probeTimeoutMs,
    events: quietEvents,
    logger: quietLogger,
    gracePeriodMs: GRACE_MS,
    viewObserver: {changed: (whole) => void (whole || spells++)},
  })
  const stop = new AbortController()
  void sight.run(stop.signal)
  // The caches are synced and their watches never drop in this model.
  cacheState('pools', undefined)
  cacheState('leases', undefined)
  lifecycle.setLeader(true)
  return {
    poolUpserted: (pool) => lifecycle.poolUpserted(pool),
    leaseUpserted: (lease) => lifecycle.leaseUpserted(lease),
    spells: () => spells,
    stop: () => stop.abort(),
  }
}

const pairs = flags.runs.split(',').map((pair) => {
  const [dead, f] = pair.split(':')
  return {dead: positiveInt('runs', dead ?? ''), failureRate: Number(f)}
})
const live = Number(flags.live)
const seeds = positiveInt('seeds', flags.seeds)
const maxMs = durationMs('max', flags.max)
const results: ModelRun[] = []
for (const {dead, failureRate} of pairs) {
  for (let seed = 1; seed <= seeds; seed++) {
    const run = await runModel({dead, live, failureRate, seed, maxMs}, wire)
    results.push(run)
    process.stderr.write(`dead=${dead} f=${failureRate} seed=${seed}: ${run.allMarkedMs === undefined ? `${run.dead - run.marked} unmarked` : `${(run.allMarkedMs / 1000).toFixed(1)} s`}\n`)
  }
}
const rows = [['dead', 'live', 'f', 'seed', 'all marked after', 'marked', 'false Unknowns', 'blind spells', 'requests', 'simulated']]
for (const r of results) {
  rows.push([
    String(r.dead),
    String(r.live),
    `${fmt(r.failureRate * 100, 0)} %`,
    String(r.seed),
    r.allMarkedMs === undefined ? `${r.dead - r.marked} still Ready=True` : `${fmt(r.allMarkedMs / 1000, 1)} s`,
    `${r.marked}/${r.dead}`,
    String(r.falseUnknowns),
    String(r.spells),
    fmt(r.requests),
    `${fmt(r.simulatedMs / 60_000, 1)} min`,
  ])
}
printTable(`verdicts model: grace ${GRACE_MS / 1000} s, probe and confirm failing with probability f (target: all marked within ${(2 * GRACE_MS) / 1000} s, 0 false Unknowns)`, rows)
