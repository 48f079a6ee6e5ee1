import {Args, Command} from '@oclif/core'
import {COMPLETION_SHELLS, completionScript} from '../cli/completion/completion-script.ts'
import {completionCommands, POOL_NAMES_TIMEOUT_MS} from '../cli/completion/completion-tree.ts'

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
    process.stdout.write(completionScript(shell, this.config.bin, completionCommands(this.config.commands)))
  }
}
