/**
 * kubectl's plugin completion, answered in cobra's `__complete` format. kubectl (1.26+) completes
 * `kubectl ironpool <args>` by running `kubectl_complete-ironpool` from PATH with every word after
 * `ironpool`, flags included and unparsed (the plugin's command disables flag parsing and kubectl's
 * own flags are cleared), the word being completed last ('' after a space), with kubectl's environment;
 * it reads stdout as one candidate a line and a last line `:<directive>`, and drops everything when
 * the completer exits non-zero (staging/src/k8s.io/kubectl/pkg/cmd/plugin/plugin_completion.go,
 * pluginCompletion and getPluginCompletions). Cobra's scripts in the shell then filter by the word
 * being completed too; filtering here as well keeps `kubectl __complete` exact.
 */
import {completionCandidates} from './completion-candidates.ts'
import type {CompletionCommand} from './completion-tree.ts'

/** Cobra's ShellCompDirective values used here (spf13/cobra completions.go). */
export const DIRECTIVE = {
  /** The shell may complete file names when nothing is offered. */
  default: 0,
  /** No file names, even when nothing is offered. */
  noFileComp: 4,
} as const

/** Flags whose value is a file: left to the shell's file completion, as kubectl's own --kubeconfig. */
const FILE_FLAGS: readonly string[] = ['--kubeconfig']

export interface KubectlCompletion {
  candidates: string[]
  directive: number
  /** Pool names are to be listed too (with these flags), then filtered by `prefix`. */
  pools?: {passed: string[]; prefix: string}
}

/** `args`: as kubectl passes them, the word being completed last. */
export function kubectlCompletion(commands: readonly CompletionCommand[], args: readonly string[]): KubectlCompletion {
  let typed = args.slice(0, -1)
  let current = args.at(-1) ?? ''
  // `--kind=vo`: the value is completed, and offered without the flag, as cobra does (its shell
  // scripts complete the part after the `=`).
  const attached = /^(--[^=]+)=(.*)$/s.exec(current)
  if (attached !== null) {
    typed = [...typed, attached[1] ?? '']
    current = attached[2] ?? ''
  }
  const matching = (words: readonly string[]) => words.filter((word) => word.startsWith(current))

  const candidates = completionCandidates(commands, typed)
  if (candidates.kind === 'value') {
    const directive = candidates.values.length === 0 && FILE_FLAGS.includes(candidates.flag) ? DIRECTIVE.default : DIRECTIVE.noFileComp
    return {candidates: matching(candidates.values), directive}
  }
  // As the bash and zsh scripts: flags only once a `-` is typed, and then nothing else.
  const isFlag = current.startsWith('-')
  const words = matching(candidates.words.filter((word) => word.startsWith('-') === isFlag))
  if (candidates.pools === undefined || isFlag) return {candidates: words, directive: DIRECTIVE.noFileComp}
  return {candidates: words, directive: DIRECTIVE.noFileComp, pools: {passed: candidates.pools.passed, prefix: current}}
}

/** The text kubectl reads: one candidate a line, then `:<directive>`. */
export function cobraOutput(candidates: readonly string[], directive: number): string {
  return [...candidates, `:${directive}`].join('\n') + '\n'
}
