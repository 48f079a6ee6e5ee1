import {expect} from 'chai'
import {readFileSync} from 'node:fs'
import {IRONPOOL_BIN, ironpoolCommand, ironpoolNodeFlags, shebangNodeFlags} from '../../../src/cli/ironpool-process.ts'

describe('ironpool-process: the Node flags of bin/run.js, for every process that starts ironpool itself', () => {
  it('reads the flags after "node" in an env -S shebang, in order', () => {
    expect(shebangNodeFlags('#!/usr/bin/env -S node --max-semi-space-size=1 --no-warnings')).to.deep.equal(['--max-semi-space-size=1', '--no-warnings'])
  })

  it('reads a shebang without flags as none, with or without -S', () => {
    expect(shebangNodeFlags('#!/usr/bin/env node')).to.deep.equal([])
    expect(shebangNodeFlags('#!/usr/bin/env -S node')).to.deep.equal([])
  })

  it('refuses a line that is not an env shebang of node, naming it', () => {
    expect(() => shebangNodeFlags('import x from "y"')).to.throw(/not a "#!\/usr\/bin\/env -S node \[--flag \.\.\.\]" line: "import x/)
    expect(() => shebangNodeFlags('#!/usr/bin/env deno')).to.throw(/not a/)
    expect(() => shebangNodeFlags('#!/usr/bin/node --x')).to.throw(/not a/)
  })

  it('refuses a word that is not a --flag (a script name, a value split from its flag)', () => {
    expect(() => shebangNodeFlags('#!/usr/bin/env -S node --max-semi-space-size 1')).to.throw(/"1" in .* is not a --flag/)
  })

  it('gives the flags of the real bin/run.js, which starts with a shebang this reads', () => {
    const line = readFileSync(IRONPOOL_BIN, 'utf8').split('\n', 1)[0] ?? ''
    expect(ironpoolNodeFlags()).to.deep.equal(shebangNodeFlags(line))
  })

  it('runs bin/run.js under this Node, its flags before the script and the arguments after it', () => {
    const {command, args} = ironpoolCommand(['pool', 'status'])
    expect(command).to.equal(process.execPath)
    expect(args).to.deep.equal([...ironpoolNodeFlags(), IRONPOOL_BIN, 'pool', 'status'])
  })
})
