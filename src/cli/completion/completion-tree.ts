/**
 * The one table every completer of ironpool offers from: the command tree, each command's flags and
 * the fixed values of flags and arguments, made from oclif's commands by completionCommands(). The
 * bash/zsh script (completion-script.ts) holds it as `case` arms, so that a TAB starts no process;
 * kubectl's plugin completer (kubectl-completion.ts) reads it as the JSON the build writes beside the
 * bundle (scripts/build.ts), so that it need not load oclif. Both read it through the lookups here.
 *
 * Type imports only: the kubectl completer's bundle must not pull in oclif through this module.
 */
import type {Command} from '@oclif/core'

export interface CompletionFlag {
  name: string
  char?: string
  /** Takes a value (an option flag), as opposed to a boolean. */
  takesValue: boolean
  /** Its fixed values, offered after the flag. */
  options?: readonly string[]
}

export interface CompletionCommand {
  /** Words as typed: 'pool status'. */
  id: string
  flags: readonly CompletionFlag[]
  /** Its arguments are pool names. */
  pools: boolean
  /** The fixed values of its first argument (`completion bash|zsh`). */
  argValues?: readonly string[]
}

/** How long completion waits for each list of pools: a TAB must not hang on an API that is away. */
export const POOL_NAMES_TIMEOUT_MS = 1500

/** The flags passed on to the pool-name lister when typed: they choose the cluster and the kinds. */
export const PASSED_FLAGS: readonly string[] = ['--kubeconfig', '--context', '--kind']

/** The commands whose arguments are pool names (oclif ids). */
const POOL_ARGUMENTS = new Set(['pool:status', 'lease:inspect'])

/** The fixed values of a command's first argument, if it has any. */
function argValues(args: Command.Loadable['args']): {argValues?: string[]} {
  const options = Object.values(args)[0]?.options
  return options === undefined ? {} : {argValues: [...options]}
}

/** The table from oclif's loaded commands (`config.commands`): hidden commands and flags left out. */
export function completionCommands(commands: readonly Command.Loadable[]): CompletionCommand[] {
  return commands
    .filter((command) => !command.hidden)
    .map((command) => ({
      id: command.id.replaceAll(':', ' '),
      pools: POOL_ARGUMENTS.has(command.id),
      ...argValues(command.args),
      flags: Object.entries(command.flags)
        .filter(([, flag]) => flag.hidden !== true)
        .map(([name, flag]) => ({
          name,
          ...(flag.char === undefined ? {} : {char: flag.char}),
          takesValue: flag.type === 'option',
          ...(flag.type === 'option' && flag.options !== undefined ? {options: flag.options} : {}),
        })),
    }))
    .sort((a, b) => a.id.localeCompare(b.id))
}

/** How a flag is typed: --name, and -c where it has a short name. */
export function flagSpellings(flag: CompletionFlag): string[] {
  return [`--${flag.name}`, ...(flag.char ? [`-${flag.char}`] : [])]
}

/** The children of each command path (the empty path is the root): topics and commands, sorted. */
export function subcommands(commands: readonly CompletionCommand[]): Map<string, string[]> {
  const children = new Map<string, Set<string>>()
  for (const command of commands) {
    const words = command.id.split(' ')
    for (let i = 0; i < words.length; i++) {
      const parent = words.slice(0, i).join(' ')
      const set = children.get(parent) ?? new Set<string>()
      set.add(words[i] ?? '')
      children.set(parent, set)
    }
  }
  return new Map([...children].map(([parent, set]) => [parent, [...set].sort()]))
}

/** The flag words a command offers: its flags, then --help, which oclif gives every command. */
export function flagWords(command: CompletionCommand): string[] {
  return [...command.flags.flatMap(flagSpellings), '--help']
}

/** Spellings of the flags that take a value: the word after one of them is its value, not a command. */
export function valueFlagWords(command: CompletionCommand | undefined): string[] {
  return (command?.flags ?? []).filter((flag) => flag.takesValue).flatMap(flagSpellings)
}

/** The fixed values offered after each spelling of a flag, keyed by command and spelling: 'pool status -o'. */
export function flagValues(commands: readonly CompletionCommand[]): Map<string, readonly string[]> {
  return new Map(
    commands.flatMap((command) =>
      command.flags.flatMap((flag) => (flag.options === undefined ? [] : flagSpellings(flag).map((spelling): [string, readonly string[]] => [`${command.id} ${spelling}`, flag.options ?? []]))),
    ),
  )
}
