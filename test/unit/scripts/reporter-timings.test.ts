import {EventEmitter} from 'node:events'
import {createRequire} from 'node:module'
import path from 'node:path'
import {expect} from 'chai'

// test/reporter.cjs is CommonJS (mocha loads reporters by require); its timings parts are read here
// with a fake runner (an EventEmitter carrying mocha's suite events) and a fake clock.
interface Entry {ms: number; tests: number}
interface FakeSuite {root: boolean; file: string | undefined; tests: unknown[]}
const reporter = createRequire(import.meta.url)('../../reporter.cjs') as {
  recordFileTimings: (runner: EventEmitter, now: () => number) => Map<string, Entry>
  timingLines: (files: Map<string, Entry>, limit?: number) => string[]
}

const suite = (file: string | undefined, tests = 1): FakeSuite => ({root: false, file: file === undefined ? undefined : path.resolve(file), tests: new Array(tests)})

describe('the reporter\'s per-file timings (IRONPOOL_TEST_TIMINGS=1)', () => {
  it('times a file from its first suite\'s start to its last suite\'s end, nested suites once, several top-level suites summed', () => {
    const runner = new EventEmitter()
    let clock = 0
    const files = reporter.recordFileTimings(runner, () => clock)
    const root: FakeSuite = {root: true, file: undefined, tests: []}
    const a = suite('test/a.test.ts', 2)
    const aInner = suite('test/a.test.ts', 3)
    const a2 = suite('test/a.test.ts', 1)
    const b = suite('test/b.test.ts', 4)
    runner.emit('suite', root)
    runner.emit('suite', a); clock = 100
    runner.emit('suite', aInner); clock = 300
    runner.emit('suite end', aInner); clock = 400
    runner.emit('suite end', a)
    runner.emit('suite', b); clock = 1400
    runner.emit('suite end', b)
    runner.emit('suite', a2); clock = 1450
    runner.emit('suite end', a2)
    runner.emit('suite end', root)
    expect([...files].map(([file, {ms, tests}]) => [path.relative(process.cwd(), file), ms, tests])).to.deep.equal([
      ['test/a.test.ts', 450, 6],
      ['test/b.test.ts', 1000, 4],
    ])
  })

  it('lists the slowest files first, ties by name, at most the limit, and the total over all files', () => {
    const files = new Map<string, Entry>([
      [path.resolve('test/quick.test.ts'), {ms: 500, tests: 9}],
      [path.resolve('test/slow.test.ts'), {ms: 3000, tests: 2}],
      [path.resolve('test/b-tie.test.ts'), {ms: 1500, tests: 1}],
      [path.resolve('test/a-tie.test.ts'), {ms: 1500, tests: 1}],
    ])
    const lines = reporter.timingLines(files, 3)
    expect(lines[0]).to.equal('per-file wall time (the 3 slowest of 4 files):')
    expect(lines.slice(1, -1).map((line) => line.trim().split(/\s+/))).to.deep.equal([
      ['3.0', 's', '46.2', '%', '2', 'tests', 'test/slow.test.ts'],
      ['1.5', 's', '23.1', '%', '1', 'tests', 'test/a-tie.test.ts'],
      ['1.5', 's', '23.1', '%', '1', 'tests', 'test/b-tie.test.ts'],
    ])
    expect(lines.at(-1)?.trim()).to.equal('6.5 s  in 4 files')
  })
})
