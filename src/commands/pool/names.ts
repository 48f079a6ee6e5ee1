import {Command, Flags} from '@oclif/core'
import {POOL_NAMES_TIMEOUT_MS} from '../../cli/completion/completion-tree.ts'
import {withEnv} from '../../cli/flags.ts'
import {operatorFlags, reportFailure} from '../../cli/operator-flags.ts'
import {POOL_KIND_NAMES} from '../../core/index.ts'

export default class PoolNames extends Command {
  static override summary = 'Print the names of the pools, one a line (for shell completion).'
  static override description = `Lists the pools of every kind (or --kind), each list bounded by ${POOL_NAMES_TIMEOUT_MS} ms; a kind that cannot be listed in time adds no names. Used by the script of \`ironpool completion\`.`
  static override hidden = true

  static override flags = withEnv({
    kind: Flags.option({options: POOL_KIND_NAMES, multiple: true, delimiter: ',', description: 'Pool kinds to list. Default: all.'})(),
    ...operatorFlags(),
  })

  async run(): Promise<void> {
    const {flags} = await this.parse(PoolNames)
    try {
      const {listPoolNames} = await import('../../cli/pool-names.ts')
      const names = await listPoolNames({kubeconfig: flags.kubeconfig, context: flags.context, kinds: flags.kind ?? POOL_KIND_NAMES})
      if (names.length > 0) process.stdout.write(`${names.join('\n')}\n`)
    } catch (error) {
      reportFailure(error, {debug: flags.debug})
    }
  }
}
