import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {completionScript} from '../../../src/cli/completion/completion-script.ts'
import {COMPLETION_COMMANDS as COMMANDS, completionShellRig, shellInstalled, type CompletionShellRig} from '../../support/completion-shell.ts'

describe('completion-script: bash and zsh completion of ironpool', () => {
  let rig: CompletionShellRig
  let dir: string

  before(async () => {
    rig = await completionShellRig()
    dir = rig.dir
  })
  after(async () => {
    await rig.close()
  })

  const candidates = (shell: 'bash' | 'zsh', words: string[]) => rig.candidates(shell, words)

  for (const shell of ['bash', 'zsh'] as const) {
    describe(shell, () => {
      before(function () {
        if (!shellInstalled(shell)) this.skip()
      })

      it('offers the topics and commands at the root without starting ironpool', async () => {
        const result = await candidates(shell, [])
        expect(result.out).to.deep.equal(['completion', 'lease', 'pool', 'version'])
        expect(result.calls).to.deep.equal([])
      })

      it("offers a topic's commands, and a command's flags", async () => {
        expect((await candidates(shell, ['pool'])).out).to.deep.equal(['status'])
        const version = await candidates(shell, ['version'])
        expect(version.out).to.deep.equal(['--json', '--help'])
        expect(version.calls).to.deep.equal([])
        expect((await candidates(shell, ['completion'])).out).to.deep.equal(['--help', 'bash', 'zsh'])
      })

      it('offers the values of a flag with fixed options, by its long and short name', async () => {
        expect((await candidates(shell, ['pool', 'status', '--kind'])).out).to.deep.equal(['machine', 'volume', 'bucket'])
        expect((await candidates(shell, ['pool', 'status', '-o'])).out).to.deep.equal(['wide', 'json', 'yaml'])
        const free = await candidates(shell, ['pool', 'status', '-l'])
        expect(free.out).to.deep.equal([])
        expect(free.calls, 'a selector is not a pool name').to.deep.equal([])
      })

      it('asks ironpool for pool names after pool status and lease inspect, passing --kubeconfig, --context and --kind as typed', async () => {
        const plain = await candidates(shell, ['lease', 'inspect'])
        expect(plain.out).to.include.members(['p1', 'p2', '--kind', '--kubeconfig'])
        expect(plain.calls).to.deep.equal(['pool names'])
        const typed = await candidates(shell, ['pool', 'status', '-w', '--kubeconfig', '/k/config', '-l', 'a=b', '--context=prod', '--kind', 'volume', 'p1'])
        expect(typed.out).to.include.members(['p1', 'p2'])
        expect(typed.calls).to.deep.equal(['pool names --kubeconfig=/k/config --context=prod --kind=volume'])
      })
    })
  }

  it('completes through bash\'s own entry point, filtered by the word being typed', () => {
    const script = completionScript('bash', 'ironpool', COMMANDS)
    const run = (line: string) =>
      execFileSync('bash', ['-c', `${script}\n${line}\n_ironpool; printf '%s\\n' "\${COMPREPLY[@]}"`], {encoding: 'utf8', env: {PATH: `${dir}:/usr/bin:/bin`, HOME: dir}, stdio: ['ignore', 'pipe', 'pipe']}).trim().split('\n')
    expect(run('COMP_WORDS=(ironpool po); COMP_CWORD=1')).to.deep.equal(['pool'])
    expect(run('COMP_WORDS=(ironpool pool status --w); COMP_CWORD=3')).to.deep.equal(['--watch'])
    expect(run("COMP_WORDS=(ironpool lease inspect ''); COMP_CWORD=3")).to.deep.equal(['p1', 'p2'])
  })
})
