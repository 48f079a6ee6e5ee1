/**
 * A thousand poollets retrying against a recovering API (the simulator: the real Heartbeat and
 * LeaseRenewer, production timings). The API fails every request for a while (a stall, or writes
 * refused), then recovers; prints the poollets' requests per second in steady state, during the
 * outage, and in each 5 s after recovery: the retries' backoff and jitter must keep the recovering
 * API's load bounded. Simulated time: the figures do not depend on the machine.
 *
 *   npm run bench:poollet-recovery [-- --pools=1000 --outage=180s --fault=refuse-writes,stall]
 */
import {durationMs, parseArgs, positiveInt} from './support/args.ts'
import {printTable} from './support/table.ts'
import {runSeed} from '../sim/run.ts'
import type {Fault} from '../sim/faults.ts'

const flags = parseArgs({
  pools: {default: '1000', help: 'poollets'},
  outage: {default: '180s', help: 'how long the API fails'},
  fault: {default: 'refuse-writes,stall', help: 'comma-separated: refuse-writes, stall'},
})
const pools = positiveInt('pools', flags.pools)
const outageMs = durationMs('outage', flags.outage)
const start = 120_000
const end = start + outageMs
const rows = [['fault', 'steady req/s', 'outage req/s', 'peak 5 s after recovery (req/s)', 'first 30 s after (req/s)', 'x steady']]
for (const cls of flags.fault.split(',')) {
  const perSecond = new Map<number, number>()
  const fault: Fault = cls === 'stall' ? {class: 'stall', start, end} : {class: 'refuse-writes', start, end}
  await runSeed(1, {
    scenario: {seed: 1, pools, replicas: 1, durationMs: end + 120_000, classes: [fault.class], faults: [fault], deaths: [], recreations: []},
    onSent: (by, _op, at) => {
      if (by.role === 'poollet') perSecond.set(Math.floor(at / 1000), (perSecond.get(Math.floor(at / 1000)) ?? 0) + 1)
    },
  })
  const rate = (from: number, to: number) => {
    let n = 0
    for (let s = Math.floor(from / 1000); s < Math.floor(to / 1000); s++) n += perSecond.get(s) ?? 0
    return n / ((to - from) / 1000)
  }
  const steady = rate(60_000, start)
  let peak = 0
  for (let t = end; t < end + 60_000; t += 5_000) peak = Math.max(peak, rate(t, t + 5_000))
  const after = rate(end, end + 30_000)
  rows.push([cls, steady.toFixed(0), rate(start + 10_000, end).toFixed(0), peak.toFixed(0), after.toFixed(0), (peak / steady).toFixed(2)])
}
printTable(`${pools} poollets, the API failing for ${outageMs / 1000} s then recovering (simulated; heartbeat 10 s, Lease 40 s)`, rows)
