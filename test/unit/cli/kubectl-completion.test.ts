import {expect} from 'chai'
import {cobraOutput, DIRECTIVE, kubectlCompletion} from '../../../src/cli/completion/kubectl-completion.ts'
import {poolNamesOptions} from '../../../src/cli/pool-names.ts'
import {COMPLETION_COMMANDS} from '../../support/completion-shell.ts'

/** What kubectl_complete-ironpool prints for the words kubectl passes (the word being completed last), before pool names. */
const printed = (...args: string[]) => {
  const answer = kubectlCompletion(COMPLETION_COMMANDS, args)
  return cobraOutput(answer.candidates, answer.directive)
}

describe("kubectl-completion: kubectl_complete-ironpool's answer, in cobra's __complete format", () => {
  describe('command words', () => {
    it('offers the topics and commands after `kubectl ironpool `, one a line, then :4 (no file names)', () => {
      expect(printed('')).to.equal('completion\nlease\npool\nversion\n:4\n')
      expect(DIRECTIVE.noFileComp).to.equal(4)
    })

    it('offers only what starts with the word typed', () => {
      expect(printed('po')).to.equal('pool\n:4\n')
      expect(printed('pool', '')).to.equal('status\n:4\n')
      expect(printed('pool', 'x')).to.equal(':4\n')
      expect(printed('completion', '')).to.equal('bash\nzsh\n:4\n')
    })

    it('takes no words at all as the empty word (kubectl always passes one)', () => {
      expect(printed()).to.equal(printed(''))
    })
  })

  describe('flags', () => {
    it("offers a command's flags once a - is typed, and then nothing else", () => {
      expect(printed('pool', 'status', '--k')).to.equal('--kind\n--kubeconfig\n:4\n')
      expect(printed('pool', 'status', '-')).to.equal('--kind\n--output\n-o\n--selector\n-l\n--watch\n-w\n--kubeconfig\n--context\n--help\n:4\n')
      expect(printed('version', '--')).to.equal('--json\n--help\n:4\n')
    })

    it('offers no flags where no command is typed yet', () => {
      expect(printed('--k')).to.equal(':4\n')
    })
  })

  describe('flag values', () => {
    it('offers the fixed values after a flag, by its long and short name', () => {
      expect(printed('pool', 'status', '--kind', '')).to.equal('machine\nvolume\nbucket\n:4\n')
      expect(printed('pool', 'status', '-o', 'j')).to.equal('json\n:4\n')
      expect(printed('lease', 'inspect', 'p1', '--kind', 'v')).to.equal('volume\n:4\n')
    })

    it('completes the value of --flag=, offering the value alone as cobra does', () => {
      expect(printed('pool', 'status', '--kind=')).to.equal('machine\nvolume\nbucket\n:4\n')
      expect(printed('pool', 'status', '--output=w')).to.equal('wide\n:4\n')
    })

    it("leaves --kubeconfig's value to the shell's file names (:0), and offers nothing for other free values", () => {
      expect(printed('pool', 'status', '--kubeconfig', '')).to.equal(':0\n')
      expect(printed('pool', 'status', '--kubeconfig=/tmp/')).to.equal(':0\n')
      expect(printed('pool', 'status', '-l', '')).to.equal(':4\n')
      expect(printed('pool', 'status', '--context', '')).to.equal(':4\n')
    })
  })

  describe('pool names', () => {
    it('asks for pool names after pool status and lease inspect, with the flags typed and the word as a prefix', () => {
      expect(kubectlCompletion(COMPLETION_COMMANDS, ['pool', 'status', ''])).to.deep.equal({candidates: [], directive: 4, pools: {passed: [], prefix: ''}})
      expect(kubectlCompletion(COMPLETION_COMMANDS, ['lease', 'inspect', '--kubeconfig', '/k', '--context=prod', '-l', 'a=b', '--kind', 'volume', 'm'])).to.deep.equal({
        candidates: [],
        directive: 4,
        pools: {passed: ['--kubeconfig=/k', '--context=prod', '--kind=volume'], prefix: 'm'},
      })
    })

    it('asks for none while a flag or a flag value is completed, nor after a topic or another command', () => {
      for (const args of [['pool', 'status', '--'], ['pool', 'status', '--kind', ''], ['pool', ''], ['version', ''], ['']]) {
        expect(kubectlCompletion(COMPLETION_COMMANDS, args).pools, args.join(' ')).to.equal(undefined)
      }
    })

    it('lists with the last --kubeconfig and --context and every --kind, all kinds by default', () => {
      expect(poolNamesOptions([])).to.deep.equal({kinds: ['machine', 'volume', 'bucket']})
      expect(poolNamesOptions(['--kubeconfig=/a', '--context=x', '--kubeconfig=/b=c', '--kind=volume,bucket', '--kind=machine'])).to.deep.equal({
        kubeconfig: '/b=c',
        context: 'x',
        kinds: ['volume', 'bucket', 'machine'],
      })
    })

    it('lists nothing when a --kind is not a kind, as `ironpool pool names` refuses it', () => {
      expect(poolNamesOptions(['--kind=volume,disk'])).to.equal(undefined)
      expect(poolNamesOptions(['--kind='])).to.equal(undefined)
    })
  })
})
