/**
 * The completion script's candidates function run by a real shell, against a stand-in ironpool that
 * records how `pool names` was called and prints two names: shared by the script's own tests and by
 * the check that its JavaScript twin (src/cli/completion/completion-candidates.ts) offers the same.
 */
import {execFileSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import {mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {completionScript, type CompletionCommand, type CompletionShell} from '../../src/cli/completion/completion-script.ts'

/** A command table with topics, flags with and without fixed values, short names and pool arguments. */
export const COMPLETION_COMMANDS: CompletionCommand[] = [
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

/** The names the stand-in ironpool's `pool names` prints. */
export const STUB_POOL_NAMES = ['p1', 'p2']

export function shellInstalled(shell: CompletionShell): boolean {
  return existsSync(`/usr/bin/${shell}`) || existsSync(`/bin/${shell}`)
}

export interface CompletionShellRig {
  dir: string
  /** The stand-in ironpool. */
  bin: string
  /** `_ironpool_candidates` for the words typed after `ironpool`: its words, and each `pool names` call's arguments. */
  candidates(shell: CompletionShell, words: readonly string[]): Promise<{out: string[]; calls: string[]}>
  close(): Promise<void>
}

export async function completionShellRig(commands: readonly CompletionCommand[] = COMPLETION_COMMANDS): Promise<CompletionShellRig> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ironpool-completion-'))
  const calls = path.join(dir, 'calls')
  const bin = path.join(dir, 'ironpool')
  await writeFile(bin, `#!/bin/sh\necho "$*" >> ${JSON.stringify(calls)}\n${STUB_POOL_NAMES.map((name) => `echo ${name}\n`).join('')}`, {mode: 0o755})
  return {
    dir,
    bin,
    async candidates(shell, words) {
      await rm(calls, {force: true})
      const script = path.join(dir, `script.${shell}`)
      await writeFile(script, completionScript(shell, 'ironpool', commands))
      const setup = shell === 'zsh' ? 'autoload -U compinit && compinit -u -D; ' : ''
      const quoted = words.map((word) => `'${word}'`).join(' ')
      const out = execFileSync(shell, ['-c', `${setup}source ${script}; _ironpool_candidates ${bin} ${quoted}`], {encoding: 'utf8', env: {PATH: '/usr/bin:/bin', HOME: dir}, stdio: ['ignore', 'pipe', 'pipe']})
      const recorded = existsSync(calls) ? (await readFile(calls, 'utf8')).trim().split('\n') : []
      return {out: out.split(/\s+/).filter((word) => word !== ''), calls: recorded}
    },
    close: () => rm(dir, {recursive: true, force: true}),
  }
}
