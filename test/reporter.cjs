'use strict'
// mocha's spec reporter, closed by the plain line CI reads: "N passed, N failed[, N skipped]".
// With IRONPOOL_TEST_TIMINGS=1 (npm run test:timings) it first prints each test file's wall time,
// slowest first: from its first suite's start to its last suite's end, hooks included (a control
// plane started in a before() hook counts against the file that starts it). The final line stays last.
const path = require('node:path')
const {performance} = require('node:perf_hooks')
const Mocha = require('mocha')

const {Spec} = Mocha.reporters
const {EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END} = Mocha.Runner.constants

class IronpoolReporter extends Spec {
  constructor(runner, options) {
    super(runner, options)
    const timings = process.env.IRONPOOL_TEST_TIMINGS === '1'
    /** @type {Map<string, {ms: number, tests: number, started: number | undefined, depth: number}>} */
    const files = new Map()
    if (timings) {
      runner.on(EVENT_SUITE_BEGIN, (suite) => {
        if (suite.root || suite.file === undefined) return
        const entry = files.get(suite.file) ?? {ms: 0, tests: 0, started: undefined, depth: 0}
        if (entry.depth === 0) entry.started = performance.now()
        entry.depth += 1
        entry.tests += suite.tests.length
        files.set(suite.file, entry)
      })
      runner.on(EVENT_SUITE_END, (suite) => {
        const entry = suite.file === undefined ? undefined : files.get(suite.file)
        if (suite.root || entry === undefined) return
        entry.depth -= 1
        if (entry.depth === 0 && entry.started !== undefined) entry.ms += performance.now() - entry.started
      })
    }
    runner.once(EVENT_RUN_END, () => {
      if (timings) printTimings(files)
      const {passes, failures, pending} = runner.stats ?? this.stats
      const skipped = pending > 0 ? `, ${pending} skipped` : ''
      process.stdout.write(`${passes} passed, ${failures} failed${skipped}\n`)
    })
  }
}

function printTimings(files) {
  const rows = [...files].sort((a, b) => b[1].ms - a[1].ms)
  const total = rows.reduce((sum, [, entry]) => sum + entry.ms, 0)
  process.stdout.write('\nper-file wall time (slowest first):\n')
  for (const [file, entry] of rows) {
    const seconds = (entry.ms / 1000).toFixed(1).padStart(7)
    process.stdout.write(`${seconds} s  ${String(entry.tests).padStart(4)} tests  ${path.relative(process.cwd(), file)}\n`)
  }
  process.stdout.write(`${(total / 1000).toFixed(1).padStart(7)} s  in ${rows.length} files\n\n`)
}

module.exports = IronpoolReporter
