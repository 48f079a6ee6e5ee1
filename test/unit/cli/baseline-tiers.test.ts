import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'
import {BASELINE_TIERS_V8_FLAGS, runsPoollet} from '../../../src/cli/baseline-tiers.ts'

const MODULE = fileURLToPath(new URL('../../../src/cli/baseline-tiers.ts', import.meta.url))
/** V8's %GetOptimizationStatus bit for "has optimized code" (Maglev or TurboFan). */
const OPTIMIZED = 1 << 4

/**
 * Runs a function hot enough for V8 to optimize it (a count of calls, not a time), in a Node of its
 * own, with or without keepToBaselineTiers() first, and gives V8's optimization status of it.
 */
function statusOfHotFunction(keep: boolean): {status: number; flags: string[]} {
  const script = `
    import {baselineTiersFlags, keepToBaselineTiers} from ${JSON.stringify(MODULE)}
    const before = baselineTiersFlags()
    const flags = ${keep} ? keepToBaselineTiers() : []
    if (before.length !== 0 || JSON.stringify(baselineTiersFlags()) !== JSON.stringify(flags)) throw new Error('baselineTiersFlags() ' + baselineTiersFlags())
    function hot(values) { let sum = 0; for (let i = 0; i < values.length; i++) sum += values[i] * 2; return sum }
    const values = Array.from({length: 100}, (_, i) => i)
    for (let i = 0; i < 20000; i++) hot(values)
    console.log(JSON.stringify({status: %GetOptimizationStatus(hot), flags}))
  `
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', '--input-type=module', '-e', script], {encoding: 'utf8'})
  return JSON.parse(out) as {status: number; flags: string[]}
}

describe('baseline-tiers: V8 optimizing compilers off for the rest of a process (the poollet once started)', function () {
  this.timeout(30_000)

  it('a hot function is optimized when nothing is turned off (the check below can see optimization)', () => {
    expect(statusOfHotFunction(false).status & OPTIMIZED).to.equal(OPTIMIZED)
  })

  it('after keepToBaselineTiers(), the same hot function is never optimized; it returns the flags it set', () => {
    const {status, flags} = statusOfHotFunction(true)
    expect(status & OPTIMIZED).to.equal(0)
    expect(flags).to.deep.equal([...BASELINE_TIERS_V8_FLAGS])
    expect(flags).to.include.members(['--no-maglev', '--no-opt'])
  })

  it('is for `ironpool poollet ...` only: not the controller, the CLI, help or no command', () => {
    expect(runsPoollet(['poollet', '--pool-name=p1'])).to.be.true
    for (const args of [['controller'], ['pool', 'status'], ['sandbox'], ['--help', 'poollet'], []]) expect(runsPoollet(args), args.join(' ')).to.be.false
  })
})
