'use strict'
// `npm test`'s mocha run: .mocharc.json's settings, in parallel (mocha --parallel; each file runs in one
// of JOBS worker processes, each worker with its own shared control plane, see test/support/hooks.ts),
// every unit and integration test file once, the slowest first.
//
// mocha hands each free worker the next file in this list and does not balance on its own, so the
// files that take longest start first (the longest-processing-time rule): SLOWEST_FIRST is their
// measured order (seconds from `npm run test:timings`, serial, on this project's 2-core machine).
// A file not listed (a new one) runs after them, in glob order; a listed file that is gone is dropped.
// The unit files come last, the simulator's (CPU-bound, 23 s alone, 235 s beside three busy workers)
// among them: then it overlaps only the short integration files, not the fault files' held faults.
// Re-measure and reorder when a file's time changes much: only the order depends on these figures.
const fs = require('node:fs')
const path = require('node:path')

const base = require('../.mocharc.json')
/** The repository's root, where .mocharc.json is. */
const ROOT = path.dirname(require.resolve('../.mocharc.json'))

/**
 * Worker processes. The files mostly wait on real processes' timings (grace periods, faults held on
 * purpose), so two fit 2 cores. Three did not on a busy machine (load average 15 from other work): 5
 * timing-sensitive cases failed (mass-death's 400 marks within grace + 10 s, dry-run's agreement,
 * csr-flood's order, a false Unknown in network-faults, controller's Ready again); at two they pass.
 * IRONPOOL_TEST_JOBS overrides it.
 */
const JOBS = Number(process.env.IRONPOOL_TEST_JOBS ?? 2)

const SLOWEST_FIRST = [
  'test/integration/faults/replicas-under-stalls.test.ts', // 154-240
  'test/integration/faults/control-plane-faults.test.ts', // 154
  'test/integration/faults/live-verdicts.test.ts', // 108
  'test/integration/monitoring/fault-replay.test.ts', // 63
  'test/integration/kube/list-watch-cache.test.ts', // 61 (88 before its 410 case's gate)
  'test/integration/identity/bootstrap-rotation.test.ts', // 61
  'test/integration/controller/controller-faults.test.ts', // 56
  'test/integration/controller/controller.test.ts', // 52
  'test/integration/faults/network-faults.test.ts', // 37
  'test/integration/controller/mass-death.test.ts', // 34
  'test/integration/identity/bootstrap-errors.test.ts', // 28
  'test/integration/sandbox/sandbox.test.ts', // 25
  'test/integration/controller/controller-blindness.test.ts', // 25
  'test/integration/controller/dry-run.test.ts', // 24
  'test/integration/controller/oversized.test.ts', // 23
  'test/integration/poollet/poollet.test.ts', // 23
  'test/integration/controller/correlated-silence.test.ts', // 21
  'test/integration/controlplane/control-plane.test.ts', // 20
  'test/integration/controller/pool-why.test.ts', // 20
  'test/integration/poollet/lease-neighbour.test.ts', // 14
  'test/integration/controller/no-conditions.test.ts', // 14
  'test/integration/controlplane/pause.test.ts', // 13
  'test/integration/tools/install.test.ts', // 13
  'test/integration/identity/csr-flood.test.ts', // 11
  'test/integration/identity/csr-oversized.test.ts', // 11
  'test/integration/identity/csr-approver.test.ts', // 10
  'test/integration/deploy/apply.test.ts', // 10
  'test/integration/iri/frozen-runtime.test.ts', // 9
]

/** The files in run order: SLOWEST_FIRST, then the rest (integration, then unit) in glob order. */
function orderedFiles(root = ROOT) {
  const found = (pattern) => fs.globSync(pattern, {cwd: root}).map((file) => file.split(path.sep).join('/')).sort()
  const all = [...found('test/integration/**/*.test.ts'), ...found('test/unit/**/*.test.ts')]
  const present = new Set(all)
  const first = SLOWEST_FIRST.filter((file) => present.has(file))
  const listed = new Set(first)
  return [...first, ...all.filter((file) => !listed.has(file))]
}

module.exports = {...base, parallel: true, jobs: JOBS, spec: orderedFiles()}
module.exports.orderedFiles = orderedFiles
module.exports.SLOWEST_FIRST = SLOWEST_FIRST
