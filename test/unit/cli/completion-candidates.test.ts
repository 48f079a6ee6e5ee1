import {expect} from 'chai'
import {completionCandidates} from '../../../src/cli/completion/completion-candidates.ts'
import {COMPLETION_COMMANDS, completionShellRig, shellInstalled, STUB_POOL_NAMES, type CompletionShellRig} from '../../support/completion-shell.ts'

interface Case {
  why: string
  /** Words typed after `ironpool`, before the word being completed. */
  typed: string[]
  /** What is offered, in order (pool names last, as the script prints them). */
  offered: string[]
  /** The flags `pool names` is called with, when it is. */
  poolNames?: string[]
}

const FLAGS = ['--kind', '--output', '-o', '--selector', '-l', '--watch', '-w', '--kubeconfig', '--context', '--help']

const CASES: Case[] = [
  {why: 'the root offers topics and commands', typed: [], offered: ['completion', 'lease', 'pool', 'version']},
  {why: "a topic offers its commands, and no flags", typed: ['pool'], offered: ['status']},
  {why: "a command offers its flags and its argument's fixed values", typed: ['completion'], offered: ['--help', 'bash', 'zsh']},
  {why: 'a word that is no command is passed over', typed: ['nope', 'version'], offered: ['--json', '--help']},
  {why: 'a pool command offers its flags and the pool names', typed: ['pool', 'status'], offered: [...FLAGS, ...STUB_POOL_NAMES], poolNames: []},
  {why: 'after a value flag, its fixed values alone', typed: ['pool', 'status', '--kind'], offered: ['machine', 'volume', 'bucket']},
  {why: 'after a short value flag, its fixed values', typed: ['pool', 'status', '-w', '-o'], offered: ['wide', 'json', 'yaml']},
  {why: 'after a value flag without fixed values, nothing (a selector is no pool name)', typed: ['pool', 'status', '-l'], offered: []},
  {why: "a value flag's value is not taken for a command word", typed: ['pool', 'status', '-l', 'status'], offered: [...FLAGS, ...STUB_POOL_NAMES], poolNames: []},
  {
    why: '--kubeconfig, --context and --kind are passed on as typed, in either spelling; other flags are not',
    typed: ['lease', 'inspect', '--kubeconfig', '/k/config', '--context=prod', '--kind', 'volume', 'p1'],
    offered: ['--kind', '--kubeconfig', '--context', '--help', ...STUB_POOL_NAMES],
    poolNames: ['--kubeconfig=/k/config', '--context=prod', '--kind=volume'],
  },
]

describe('completion-candidates: what completion offers, the same from the script and from JavaScript', () => {
  /** The JavaScript twin's answer in the script's shape: its words, then the stand-in's names. */
  const fromJavaScript = (typed: string[]) => {
    const candidates = completionCandidates(COMPLETION_COMMANDS, typed)
    if (candidates.kind === 'value') return {offered: [...candidates.values], poolNames: undefined}
    return {offered: [...candidates.words, ...(candidates.pools === undefined ? [] : STUB_POOL_NAMES)], poolNames: candidates.pools?.passed}
  }

  describe('JavaScript (kubectl plugin completion)', () => {
    for (const c of CASES) {
      it(c.why, () => {
        expect(fromJavaScript(c.typed)).to.deep.equal({offered: c.offered, poolNames: c.poolNames})
      })
    }

    it('says which flag a value is completed for', () => {
      expect(completionCandidates(COMPLETION_COMMANDS, ['pool', 'status', '--kubeconfig'])).to.deep.equal({kind: 'value', flag: '--kubeconfig', values: []})
    })
  })

  describe('the bash script', () => {
    let rig: CompletionShellRig
    before(async function () {
      if (!shellInstalled('bash')) this.skip()
      rig = await completionShellRig()
    })
    after(async () => {
      await rig?.close()
    })

    for (const c of CASES) {
      it(c.why, async () => {
        const shell = await rig.candidates('bash', c.typed)
        expect(shell.out).to.deep.equal(c.offered)
        expect(shell.calls).to.deep.equal(c.poolNames === undefined ? [] : [['pool names', ...c.poolNames].join(' ')])
      })
    }
  })
})
