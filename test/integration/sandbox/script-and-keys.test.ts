/**
 * The sandbox's inputs without a sandbox: the --script format, the keys, and the pool plan. Pure
 * functions, here beside the sandbox's process tests because they describe the same command.
 */
import {expect} from 'chai'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {decodeKeys} from '../../../src/sandbox/keys.ts'
import {planPools} from '../../../src/sandbox/options.ts'
import {DEFAULT_WAIT_MS, parseScript} from '../../../src/sandbox/script.ts'
import {cutToWidth} from '../../../src/sandbox/tty-view.ts'

const POOLS = ['machine-1', 'volume-1', 'bucket-1']

describe('sandbox --script format', () => {
  it('reads times (absolute and +relative), actions, waits with and without "within", comments and quit', () => {
    const parsed = parseScript('# demo\n\n2s freeze machine-1\n+500ms thaw machine-1 # back\nwait volume-1 False within 30s\nwait-ready 2\nquit\n', POOLS)
    expect(parsed).to.deep.equal({
      ok: true,
      steps: [
        {line: 3, text: '2s freeze machine-1', at: {ms: 2000, relative: false}, step: {type: 'act', action: 'freeze', pool: 'machine-1'}},
        {line: 4, text: '+500ms thaw machine-1', at: {ms: 500, relative: true}, step: {type: 'act', action: 'thaw', pool: 'machine-1'}},
        {line: 5, text: 'wait volume-1 False within 30s', at: undefined, step: {type: 'wait', pool: 'volume-1', status: 'False', withinMs: 30_000}},
        {line: 6, text: 'wait-ready 2', at: undefined, step: {type: 'wait-ready', count: 2, withinMs: DEFAULT_WAIT_MS}},
        {line: 7, text: 'quit', at: undefined, step: {type: 'quit'}},
      ],
    })
  })

  const refusals: [string, string, RegExp][] = [
    ['an unknown step', 'freez machine-1', /unknown step "freez"/],
    ['a pool the sandbox does not run', 'fail machine-7', /no pool "machine-7"; the pools are machine-1, volume-1, bucket-1/],
    ['an action without a pool', 'hang', /names no pool/],
    ['a status that is not one', 'wait bucket-1 Ready', /STATUS is one of True, False, Unknown/],
    ['more pools than there are', 'wait-ready 4', /count from 0 to 3/],
    ['a bad time', '2x quit', /unknown unit "x"/],
    ['words left over', 'quit now', /unexpected "now"/],
  ]
  for (const [what, line, message] of refusals) {
    it(`refuses ${what}, naming the line`, () => {
      const parsed = parseScript(`wait-ready\n${line}\n`, POOLS)
      expect(parsed.ok).to.be.false
      const errors = parsed.ok ? [] : parsed.errors
      expect(errors).to.have.length(1)
      expect(errors[0]).to.match(/^line 2 /).and.to.match(message)
    })
  }
})

describe('sandbox keys and layout', () => {
  it('decodes digits, arrows, j/k, the toggles and both quits from one chunk', () => {
    expect(decodeKeys('3\x1b[A\x1b[Bjksfxhq\x03z')).to.deep.equal([
      {type: 'select', index: 2},
      {type: 'move', delta: -1},
      {type: 'move', delta: 1},
      {type: 'move', delta: 1},
      {type: 'move', delta: -1},
      {type: 'toggle', key: 's'},
      {type: 'toggle', key: 'f'},
      {type: 'toggle', key: 'x'},
      {type: 'toggle', key: 'h'},
      {type: 'quit'},
      {type: 'quit'},
    ])
  })

  it('spreads pools round-robin over the kinds, numbered per kind', () => {
    const plan = planPools([POOL_KINDS.machine, POOL_KINDS.volume, POOL_KINDS.bucket], 5).map((p) => p.name)
    expect(plan).to.deep.equal(['machine-1', 'volume-1', 'bucket-1', 'machine-2', 'volume-2'])
  })

  it('cuts a coloured line by its visible characters and resets the colour after a cut', () => {
    expect(cutToWidth('ab\x1b[32mcdef\x1b[39m', 4)).to.equal('ab\x1b[32mcd\x1b[0m')
    expect(cutToWidth('ab\x1b[32mcd\x1b[39m', 4)).to.equal('ab\x1b[32mcd\x1b[39m')
  })
})
