import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import {mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {completionScript, type CompletionCommand, type CompletionShell} from '../../../src/cli/completion-script.ts'

const COMMANDS: CompletionCommand[] = [
  {id: 'lease inspect', pools: true, flags: [{name: 'kind', takesValue: true, options: ['machine', 'volume', 'bucket']}, {name: 'kubeconfig', takesValue: true}, {name: 'context', takesValue: true}]},
  {
    id: 'pool status',
    pools: true,
    flags: [
      {name: 'kind', takesValue: true, options: ['machine', 'volume', 'bucket']},
      {name: 'output', char: 'o', takesValue: true, options: ['wide', 'json', 'yaml']},
      {name: 'selector', char: 'l', takesValue: true},
      {name: 'watch', char: 'w', takesValue: false},
      {name: 'kubeconfig', takesValue: true},
      {name: 'context', takesValue: true},
    ],
  },
  {id: 'version', pools: false, flags: [{name: 'json', takesValue: false}]},
  {id: 'completion', pools: false, flags: [], argValues: ['bash', 'zsh']},
]

describe('completion-script: bash and zsh completion of ironpool', () => {
  let dir: string
  let calls: string
  let bin: string

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ironpool-completion-'))
    calls = path.join(dir, 'calls')
    // Stands in for ironpool: `pool names ARGS` prints two names and records its arguments.
    bin = path.join(dir, 'ironpool')
    await writeFile(bin, `#!/bin/sh\necho "$*" >> ${JSON.stringify(calls)}\necho p1\necho p2\n`, {mode: 0o755})
  })
  after(async () => {
    await rm(dir, {recursive: true, force: true})
  })

  /** The candidates for the words typed after the command name, from the script run by the shell. */
  async function candidates(shell: CompletionShell, words: string[]): Promise<{out: string[]; calls: string[]}> {
    await rm(calls, {force: true})
    const script = path.join(dir, `script.${shell}`)
    await writeFile(script, completionScript(shell, 'ironpool', COMMANDS))
    const setup = shell === 'zsh' ? 'autoload -U compinit && compinit -u -D; ' : ''
    const quoted = words.map((word) => `'${word}'`).join(' ')
    const out = execFileSync(shell, ['-c', `${setup}source ${script}; _ironpool_candidates ${bin} ${quoted}`], {encoding: 'utf8', env: {PATH: '/usr/bin:/bin', HOME: dir}, stdio: ['ignore', 'pipe', 'pipe']})
    const recorded = existsSync(calls) ? (await readFile(calls, 'utf8')).trim().split('\n') : []
    return {out: out.split(/\s+/).filter((word) => word !== ''), calls: recorded}
  }

  for (const shell of ['bash', 'zsh'] as const) {
    describe(shell, () => {
      before(function () {
        if (!existsSync(`/usr/bin/${shell}`) && !existsSync(`/bin/${shell}`)) this.skip()
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
