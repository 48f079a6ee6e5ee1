'use strict'
// mocha's spec reporter, closed by the plain line CI reads: "N passed, N failed[, N skipped]".
const Mocha = require('mocha')

const {Spec} = Mocha.reporters
const {EVENT_RUN_END} = Mocha.Runner.constants

class IronpoolReporter extends Spec {
  constructor(runner, options) {
    super(runner, options)
    runner.once(EVENT_RUN_END, () => {
      const {passes, failures, pending} = runner.stats ?? this.stats
      const skipped = pending > 0 ? `, ${pending} skipped` : ''
      process.stdout.write(`${passes} passed, ${failures} failed${skipped}\n`)
    })
  }
}

module.exports = IronpoolReporter
