'use strict'
// mocha's spec reporter, closed by the plain line CI reads: "N passed, N failed[, N skipped]".
// With IRONPOOL_TEST_TIMINGS=1 it first prints the 20 test files that took the most time, slowest
// first, with the share of all files' time. The final line stays last.
// - Serial run (npm run test:timings): a file's wall time, from its first suite's start to its last
//   suite's end, hooks included (a control plane started in a before() hook counts against the file
//   that starts it).
// - Parallel run (npm test, mocha --parallel): a worker sends a file's events only once the file has
//   ended, so suite events carry no time (nor a file). A file's time is then the sum of its tests' and
//   hooks' durations, measured in the worker: its wall time less the loading of its modules.
const path = require('node:path')
const {performance} = require('node:perf_hooks')
const Mocha = require('mocha')

const {Spec} = Mocha.reporters
const {EVENT_HOOK_END, EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_END, EVENT_TEST_FAIL} = Mocha.Runner.constants

/** How many files the timings show; the total line still counts them all. */
const SLOWEST = 20

/**
 * Records each file's wall time on the runner's suite events, read on `now` (milliseconds; tests pass
 * a fake clock). Returns the map it fills: file -> {ms, tests, started, depth}.
 */
function recordFileTimings(runner, now) {
  /** @type {Map<string, {ms: number, tests: number, started: number | undefined, depth: number}>} */
  const files = new Map()
  runner.on(EVENT_SUITE_BEGIN, (suite) => {
    if (suite.root || suite.file === undefined) return
    const entry = files.get(suite.file) ?? {ms: 0, tests: 0, started: undefined, depth: 0}
    if (entry.depth === 0) entry.started = now()
    entry.depth += 1
    entry.tests += suite.tests.length
    files.set(suite.file, entry)
  })
  runner.on(EVENT_SUITE_END, (suite) => {
    const entry = suite.file === undefined ? undefined : files.get(suite.file)
    if (suite.root || entry === undefined) return
    entry.depth -= 1
    if (entry.depth === 0 && entry.started !== undefined) entry.ms += now() - entry.started
  })
  return files
}

/**
 * Records each file's time in a parallel run from the durations the workers measured: every test's
 * (counted once it has ended, pending ones too) and every hook's, a failed hook's included. Root hooks
 * (test/support/hooks.ts) belong to no file and are left out. Returns the map it fills: file -> {ms, tests}.
 */
function recordWorkerTimings(runner) {
  /** @type {Map<string, {ms: number, tests: number}>} */
  const files = new Map()
  const add = (runnable, tests) => {
    if (runnable.file === undefined) return
    const entry = files.get(runnable.file) ?? {ms: 0, tests: 0}
    entry.ms += typeof runnable.duration === 'number' ? runnable.duration : 0
    entry.tests += tests
    files.set(runnable.file, entry)
  }
  runner.on(EVENT_TEST_END, (test) => add(test, 1))
  runner.on(EVENT_HOOK_END, (hook) => add(hook, 0))
  // A failed hook ends with a failure, not a hook end.
  runner.on(EVENT_TEST_FAIL, (runnable) => runnable.type === 'hook' && add(runnable, 0))
  return files
}

/**
 * The timings' lines: the `limit` slowest files (ties by name), then the total over all files.
 * `parallel`: the files ran side by side in workers, timed by their tests' and hooks' durations.
 */
function timingLines(files, limit = SLOWEST, parallel = false) {
  const rows = [...files].sort((a, b) => b[1].ms - a[1].ms || a[0].localeCompare(b[0]))
  const total = rows.reduce((sum, [, entry]) => sum + entry.ms, 0)
  const what = parallel ? "per-file time in the workers, tests' and hooks' durations" : 'per-file wall time'
  const lines = [`${what} (the ${Math.min(limit, rows.length)} slowest of ${rows.length} files):`]
  for (const [file, entry] of rows.slice(0, limit)) {
    const seconds = (entry.ms / 1000).toFixed(1).padStart(7)
    const share = (total > 0 ? (100 * entry.ms) / total : 0).toFixed(1).padStart(5)
    lines.push(`${seconds} s ${share} %  ${String(entry.tests).padStart(4)} tests  ${path.relative(process.cwd(), file)}`)
  }
  lines.push(`${(total / 1000).toFixed(1).padStart(7)} s  in ${rows.length} files${parallel ? ', side by side in workers' : ''}`)
  return lines
}

class IronpoolReporter extends Spec {
  constructor(runner, options) {
    super(runner, options)
    const parallel = typeof runner.isParallelMode === 'function' && runner.isParallelMode()
    const timed = process.env.IRONPOOL_TEST_TIMINGS === '1'
    const files = !timed ? undefined : parallel ? recordWorkerTimings(runner) : recordFileTimings(runner, () => performance.now())
    runner.once(EVENT_RUN_END, () => {
      if (files !== undefined) process.stdout.write(`\n${timingLines(files, SLOWEST, parallel).join('\n')}\n\n`)
      const {passes, failures, pending} = runner.stats ?? this.stats
      const skipped = pending > 0 ? `, ${pending} skipped` : ''
      process.stdout.write(`${passes} passed, ${failures} failed${skipped}\n`)
    })
  }
}

module.exports = IronpoolReporter
module.exports.recordFileTimings = recordFileTimings
module.exports.recordWorkerTimings = recordWorkerTimings
module.exports.timingLines = timingLines
