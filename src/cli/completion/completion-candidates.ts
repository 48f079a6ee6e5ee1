/**
 * What to offer after the words typed so far: the JavaScript twin of the completion script's
 * `_<bin>_candidates` (completion-script.ts), for kubectl's plugin completer. The shell keeps its own
 * copy because a TAB in bash or zsh must start no process; the two read the same table
 * (completion-tree.ts) and one table of cases runs against both
 * (test/unit/cli/completion-candidates.test.ts), so a change to one that the other lacks fails there.
 */
import {flagValues, flagWords, PASSED_FLAGS, subcommands, valueFlagWords, type CompletionCommand} from './completion-tree.ts'

export type Candidates =
  /** The word being completed is the value of `flag`: its fixed values, if it has any. */
  | {kind: 'value'; flag: string; values: readonly string[]}
  /**
   * The word being completed is a flag, a command word or an argument: the command's flags, its
   * subcommands and its arguments' fixed values, in that order; `pools` when its arguments are pool
   * names, with the --kubeconfig, --context and --kind typed so far as `--flag=value`.
   */
  | {kind: 'words'; words: string[]; pools?: {passed: string[]}}

/** `typed`: the words between the command name and the word being completed. */
export function completionCandidates(commands: readonly CompletionCommand[], typed: readonly string[]): Candidates {
  const children = subcommands(commands)
  const byId = new Map(commands.map((command) => [command.id, command]))
  let path = ''
  /** The value flag whose value the next word is. */
  let valueOf: string | undefined
  const passed: string[] = []
  for (const word of typed) {
    if (valueOf !== undefined) {
      if (PASSED_FLAGS.includes(valueOf)) passed.push(`${valueOf}=${word}`)
      valueOf = undefined
    } else if (word.startsWith('--') && word.includes('=')) {
      if (PASSED_FLAGS.includes(word.slice(0, word.indexOf('=')))) passed.push(word)
    } else if (word.startsWith('-')) {
      if (valueFlagWords(byId.get(path)).includes(word)) valueOf = word
    } else if (children.get(path)?.includes(word) === true) {
      path = path === '' ? word : `${path} ${word}`
    }
  }
  if (valueOf !== undefined) return {kind: 'value', flag: valueOf, values: flagValues(commands).get(`${path} ${valueOf}`) ?? []}

  const command = byId.get(path)
  const below = children.get(path) ?? []
  const words = [...(command === undefined ? [] : flagWords(command)), ...below, ...(command?.argValues ?? [])]
  // As the script: pool names only where the path is a command with no subcommands of its own.
  return command?.pools === true && below.length === 0 ? {kind: 'words', words, pools: {passed}} : {kind: 'words', words}
}
