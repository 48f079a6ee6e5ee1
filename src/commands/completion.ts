import {Args, Command} from '@oclif/core'
import {COMPLETION_SHELLS, completionScript, type CompletionCommand} from '../cli/completion-script.ts'
import {POOL_NAMES_TIMEOUT_MS} from './pool/names.ts'

/** The commands whose arguments are pool names. */
const POOL_ARGUMENTS = new Set(['pool:status', 'lease:inspect'])

/** The fixed values of a command's first argument, if it has any. */
function argValues(args: Command.Loadable['args']): {argValues?: string[]} {
  const options = Object.values(args)[0]?.options
  return options === undefined ? {} : {argValues: [...options]}
}

export default class Completion extends Command {
  static override summary = 'Print the shell completion script for bash or zsh.'
  static override description = `Completes commands, flags and the values of flags with fixed options without starting ironpool, and the pool names of pool status and lease inspect from the API (with the --kubeconfig, --context and --kind typed so far), each list bounded by ${POOL_NAMES_TIMEOUT_MS} ms: when the API is away, a TAB offers no names rather than hanging.`
  static override args = {shell: Args.string({options: [...COMPLETION_SHELLS], required: true, description: 'bash or zsh'})}
  static override examples = [
    'source <(<%= config.bin %> completion bash)     # in ~/.bashrc',
    'source <(<%= config.bin %> completion zsh)      # in ~/.zshrc, after compinit',
  ]

  async run(): Promise<void> {
    const {args} = await this.parse(Completion)
    const shell = COMPLETION_SHELLS.find((name) => name === args.shell) ?? 'bash'
    const commands: CompletionCommand[] = this.config.commands
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
    process.stdout.write(completionScript(shell, this.config.bin, commands))
  }
}
