import {Command, Flags} from '@oclif/core'
import {readFile} from 'node:fs/promises'
import {colourEnabled} from '../cli/colour.ts'
import {durationFlag, failUsage, withEnv, USAGE_EXIT_CODE} from '../cli/flags.ts'
import {errorMessage, POOL_KIND_NAMES} from '../core/index.ts'
import {SANDBOX_DEFAULTS, validateSandboxOptions} from '../sandbox/options.ts'
import type {ScriptStep} from '../sandbox/script.ts'

export default class Sandbox extends Command {
  static override summary = 'Run the whole system on this machine: control plane, controller, and a poollet and runtime per pool.'
  static override description = `Starts a local kube-apiserver and etcd, applies deploy/ (without the controller's Deployment), creates the pools, and starts \`ironpool controller\` (as its ServiceAccount) and one \`ironpool poollet\` per pool (as the pool's own certificate identity), each with a test IRI runtime on a unix socket. Prints the kubeconfig and a live table of the pools.

Keys: 1-9 or arrows select a pool; s stops/starts its poollet; f freezes (SIGSTOP) / thaws it; x makes its runtime fail / recover; h makes it hang / recover; q or Ctrl-C quits.

--script FILE runs timed steps instead of keys and prints one line per pool state change ("<time> <pool> Ready=<status> <reason>"). One step per line, # comments:
  [WHEN] stop|start|freeze|thaw|fail|hang|recover POOL   (WHEN: 2s after the script began, +2s after the previous step)
  [WHEN] wait-ready [N] [within D]                        (N pools Ready=True; default all)
  [WHEN] wait POOL True|False|Unknown [within D]
  [WHEN] quit
A wait gives up after D (default 60s) and the sandbox exits 1. The script's end, q, Ctrl-C and SIGTERM all tear everything down: no process, socket or temp folder is left.`

  static override examples = [
    '<%= config.bin %> sandbox',
    '<%= config.bin %> sandbox --pools=3 --kinds=machine,volume --grace-period=6s',
    '<%= config.bin %> sandbox --pools=3 --script=demo.txt',
  ]

  static override flags = withEnv({
    pools: Flags.integer({description: 'How many pools, spread round-robin over --kinds.', default: SANDBOX_DEFAULTS.pools}),
    kinds: Flags.string({description: `Comma-separated pool kinds (${POOL_KIND_NAMES.join(', ')}).`, default: POOL_KIND_NAMES.join(',')}),
    'grace-period': durationFlag({description: "The controller's --grace-period; > --heartbeat-interval.", default: SANDBOX_DEFAULTS.gracePeriodMs}),
    'heartbeat-interval': durationFlag({
      description: "The poollets' --heartbeat-interval; their status timeout is half of it, their Lease four times it.",
      default: SANDBOX_DEFAULTS.heartbeatIntervalMs,
    }),
    script: Flags.string({description: 'A file of timed steps to run instead of keys (see above).', helpValue: '<file>'}),
  })

  async run(): Promise<void> {
    const {flags} = await this.parse(Sandbox)
    const validation = validateSandboxOptions({
      pools: flags.pools,
      kinds: flags.kinds,
      gracePeriodMs: flags['grace-period'],
      heartbeatIntervalMs: flags['heartbeat-interval'],
      script: flags.script,
    })
    if (!validation.ok) failUsage(this, validation.errors)
    const options = validation.options

    let steps: ScriptStep[] | undefined
    if (options.script !== undefined) {
      let source: string
      try {
        source = await readFile(options.script, 'utf8')
      } catch (error) {
        this.error(`--script: ${errorMessage(error)}`, {exit: USAGE_EXIT_CODE})
      }
      const {parseScript} = await import('../sandbox/script.ts')
      const parsed = parseScript(source, options.pools.map((p) => p.name))
      if (!parsed.ok) failUsage(this, parsed.errors.map((e) => `--script ${options.script}: ${e}`))
      steps = parsed.steps
    }

    // The control plane harness, client-node and the board load only once the flags are valid.
    const {runSandbox} = await import('../sandbox/run.ts')
    const code = await runSandbox(options, steps, {out: process.stdout, input: process.stdin, colour: colourEnabled(process.stdout, process.env)})
    if (code !== 0) this.exit(code)
  }
}
