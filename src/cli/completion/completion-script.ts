/**
 * Shell completion for `ironpool` (bash, and zsh through its bashcompinit): a script printed by
 * `ironpool completion bash|zsh` that holds the command tree, each command's flags and the values of
 * flags with fixed options, so that completing a command or a flag starts no process at all. Only
 * the pool names of `pool status` and `lease inspect` come from the API, through the hidden
 * `ironpool pool names`, which is bounded by a short deadline and prints nothing when the API cannot
 * be reached in time; the words already typed for --kubeconfig, --context and --kind are passed to it.
 * The table is completion-tree.ts's; `_<bin>_candidates` has a twin in JavaScript for kubectl's plugin
 * completion (completion-candidates.ts), and one table of cases checks both
 * (test/unit/cli/completion-candidates.test.ts).
 */
import {flagValues, flagWords, PASSED_FLAGS, subcommands, valueFlagWords, type CompletionCommand} from './completion-tree.ts'

export type {CompletionCommand, CompletionFlag} from './completion-tree.ts'

export const COMPLETION_SHELLS = ['bash', 'zsh'] as const
export type CompletionShell = (typeof COMPLETION_SHELLS)[number]

/** A word quoted for the shell (single quotes). */
function quoted(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`
}

/** `case` arms: one per key, `;;`-terminated, in the order given. */
function caseArms(entries: readonly [string, string][], indent: string): string {
  return entries.map(([key, value]) => `${indent}${quoted(key)}) echo ${quoted(value)} ;;`).join('\n')
}

/** One arm per key, the values joined by spaces, as the script's functions echo them. */
function joined(entries: Iterable<[string, readonly string[]]>): [string, string][] {
  return [...entries].map(([key, values]) => [key, values.join(' ')])
}

/**
 * The completion script for the shell; `bin` is the command name it completes (and runs for pool
 * names). One function, `_<bin>_candidates BIN WORD...` (the words typed between the command name and
 * the word being completed), prints the candidates in plain POSIX-style shell that bash and zsh run
 * alike (positional parameters, no arrays indexed, no variable named `path`, which zsh ties to PATH);
 * each shell's own entry point hands it the words and filters by what is typed.
 */
export function completionScript(shell: CompletionShell, bin: string, commands: readonly CompletionCommand[]): string {
  const fn = `_${bin.replaceAll(/[^A-Za-z0-9]/g, '_')}`
  const poolCommands = commands.filter((command) => command.pools).map((command) => quoted(command.id))
  const passed = PASSED_FLAGS.join(' ')
  const core = `${fn}_subcommands() {
  case "$1" in
${caseArms(joined(subcommands(commands)), '    ')}
  esac
}
${fn}_flags() {
  case "$1" in
${caseArms(commands.map((command) => [command.id, flagWords(command).join(' ')]), '    ')}
  esac
}
${fn}_value_flags() {
  case "$1" in
${caseArms(commands.map((command) => [command.id, valueFlagWords(command).join(' ')]), '    ')}
  esac
}
${fn}_flag_values() {
  case "$1" in
${caseArms(joined(flagValues(commands)), '    ')}
  esac
}
${fn}_arg_values() {
  case "$1" in
${caseArms(joined(commands.flatMap((command): [string, readonly string[]][] => (command.argValues === undefined ? [] : [[command.id, command.argValues]]))), '    ')}
  esac
}
${fn}_candidates() {
  local bin="$1" cmd="" word prev="" skip=""
  local -a given
  shift
  for word in "$@"; do
    if [ -n "$skip" ]; then
      skip=""
      case " ${passed} " in *" $prev "*) given+=("$prev=$word") ;; esac
    else
      case "$word" in
        --*=*) case " ${passed} " in *" \${word%%=*} "*) given+=("$word") ;; esac ;;
        -*) case " $(${fn}_value_flags "$cmd") " in *" $word "*) skip=1 ;; esac ;;
        *) case " $(${fn}_subcommands "$cmd") " in *" $word "*) cmd="\${cmd:+$cmd }$word" ;; esac ;;
      esac
    fi
    prev="$word"
  done
  if [ -n "$skip" ]; then
    ${fn}_flag_values "$cmd $prev"
    return
  fi
  ${fn}_flags "$cmd"
  ${fn}_subcommands "$cmd"
  ${fn}_arg_values "$cmd"
  case "$cmd" in
    ${poolCommands.length > 0 ? poolCommands.join('|') : "''"})
      [ -z "$(${fn}_subcommands "$cmd")" ] && "$bin" pool names "\${given[@]}" 2>/dev/null ;;
  esac
}
`
  const entry =
    shell === 'bash'
      ? `# ${bin} completion for bash. Load it with: source <(${bin} completion bash)
# or save it: ${bin} completion bash > ~/.local/share/bash-completion/completions/${bin}
${core}${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" candidates
  if [[ $cur == -* ]]; then
    candidates="$(${fn}_candidates "\${COMP_WORDS[0]}" "\${COMP_WORDS[@]:1:COMP_CWORD-1}" | tr ' ' '\n' | grep -e '^-')"
  else
    candidates="$(${fn}_candidates "\${COMP_WORDS[0]}" "\${COMP_WORDS[@]:1:COMP_CWORD-1}" | tr ' ' '\n' | grep -v -e '^-')"
  fi
  COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
}
complete -F ${fn} ${bin}
`
      : `#compdef ${bin}
# ${bin} completion for zsh. Load it with: source <(${bin} completion zsh) (after compinit)
# or save it as _${bin} in a folder of $fpath.
${core}${fn}() {
  local -a candidates
  if [[ $PREFIX == -* ]]; then
    candidates=(\${(f)"$(${fn}_candidates "\${words[1]}" "\${(@)words[2,CURRENT-1]}" | tr ' ' '\n' | grep -e '^-')"})
  else
    candidates=(\${(f)"$(${fn}_candidates "\${words[1]}" "\${(@)words[2,CURRENT-1]}" | tr ' ' '\n' | grep -v -e '^-')"})
  fi
  compadd -- $candidates
}
compdef ${fn} ${bin}
`
  return entry
}
