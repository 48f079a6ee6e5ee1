import {EventEmitter} from 'node:events'
import {createRequire} from 'node:module'
import path from 'node:path'
import {expect} from 'chai'

// test/reporter.cjs is CommonJS (mocha loads reporters by require); its timings parts are read here
// with a fake runner (an EventEmitter carrying mocha's suite, test and hook events) and a fake clock.
interface Entry {ms: number; tests: number}
interface FakeSuite {root: boolean; file: string | undefined; tests: unknown[]}
/** A test or hook as a parallel worker sends it: its file and the duration it measured (none if pending). */
interface FakeRunnable {type: 'test' | 'hook'; file: string | undefined; duration: number | undefined}
const reporter = createRequire(import.meta.url)('../../reporter.cjs') as {
  recordFileTimings: (runner: EventEmitter, now: () => number) => Map<string, Entry>
  recordWorkerTimings: (runner: EventEmitter) => Map<string, Entry>
  timingLines: (files: Map<string, Entry>, limit?: number, parallel?: boolean) => string[]
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

  it('in a parallel run, sums each file\'s test and hook durations as the workers measured them, failed hooks too, root hooks left out', () => {
    const runner = new EventEmitter()
    const files = reporter.recordWorkerTimings(runner)
    const a = path.resolve('test/a.test.ts')
    const b = path.resolve('test/b.test.ts')
    const test = (file: string, duration: number | undefined): FakeRunnable => ({type: 'test', file, duration})
    const hook = (file: string | undefined, duration: number): FakeRunnable => ({type: 'hook', file, duration})
    // The events of a file arrive together, once it has ended: b's first, then a's.
    runner.emit('suite', {root: true, file: undefined, tests: []})
    runner.emit('hook end', hook(undefined, 5000)) // a root hook (test/support/hooks.ts): no file's
    runner.emit('hook end', hook(b, 4000)) // a before() starting a control plane
    runner.emit('test end', test(b, 1200))
    runner.emit('fail', hook(b, 300)) // a failed afterEach(): a failure, no hook end
    runner.emit('suite end', {root: true, file: undefined, tests: []})
    runner.emit('test end', test(a, 10))
    runner.emit('test end', test(a, undefined)) // pending: counted, no time
    runner.emit('fail', test(a, 90)) // a failed test also ends: counted at its end only
    runner.emit('test end', test(a, 90))
    expect([...files].map(([file, {ms, tests}]) => [path.relative(process.cwd(), file), ms, tests])).to.deep.equal([
      ['test/b.test.ts', 5500, 1],
      ['test/a.test.ts', 100, 3],
    ])
    const lines = reporter.timingLines(files, 20, true)
    expect(lines[0]).to.equal("per-file time in the workers, tests' and hooks' durations (the 2 slowest of 2 files):")
    expect(lines.at(-1)?.trim()).to.equal('5.6 s  in 2 files, side by side in workers')
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
