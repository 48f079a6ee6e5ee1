import {Args, Command, Flags} from '@oclif/core'
import {withEnv} from '../../cli/flags.ts'
import type {KubeSession} from '../../cli/kube-session.ts'
import {OperatorError} from '../../cli/operator-errors.ts'
import {operatorFlags, reportFailure} from '../../cli/operator-flags.ts'
import {explainPool, POOL_KIND_NAMES, POOL_KINDS, WHY_EXIT_CODES, type PoolWhy} from '../../core/index.ts'

export default class PoolWhyCommand extends Command {
  static override summary = 'Say why a pool is marked Unknown, or what keeps a silent pool from being marked.'
  static override description = `Reads the pool, its Lease and the verdict records the controller (and a dry run) left on their Events: when and by which controller a pool was marked, the last progress it saw, the silence counted against the grace period, the blind time not counted and why, the confirming read, the breaker and the limiter; for a pool not marked, what holds it (a write failing, the breaker, an API that cannot hold a mark) and since when. Exit code: ${WHY_EXIT_CODES.marked} marked, ${WHY_EXIT_CODES['not-marked']} not marked, ${WHY_EXIT_CODES.unknown} unknown (no record says why), 1 a failure. Every flag can also be set by an IRONPOOL_<FLAG> environment variable.`
  static override args = {name: Args.string({description: 'The pool name.', required: true})}
  static override examples = ['<%= config.bin %> pool why p1', '<%= config.bin %> pool why v1 --kind=volume -o json']

  static override flags = withEnv({
    kind: Flags.option({options: POOL_KIND_NAMES, description: 'Pool kind. Default: the kind that has a pool of that name.'})(),
    output: Flags.option({char: 'o', options: ['json', 'yaml'] as const, description: 'Print the answer as JSON or YAML (the record in full).'})(),
    ...operatorFlags(),
  })

  async run(): Promise<PoolWhy | undefined> {
    const {args, flags} = await this.parse(PoolWhyCommand)
    let session: KubeSession | undefined
    try {
      // Imported once the flags are parsed: a usage error exits before client-node loads.
      const [{openSession}, {servedKinds}, {readPools}, {verdictEvents, latestBreakerEvent}, {poolWhyOutput}] = await Promise.all([
        import('../../cli/kube-session.ts'),
        import('../../kube/stores/served-kinds.ts'),
        import('../../kube/stores/pool-snapshot.ts'),
        import('../../kube/stores/verdict-events.ts'),
        import('../../cli/report/pool-why-report.ts'),
      ])
      session = openSession({kubeconfig: flags.kubeconfig, context: flags.context})
      const wanted = flags.kind === undefined ? undefined : [POOL_KINDS[flags.kind]]
      const kinds = await servedKinds(session.kc, Object.values(POOL_KINDS), wanted)
      const snapshot = await readPools(session.kc, kinds, {names: [args.name]})
      const [entry, ...others] = snapshot.entries
      if (entry === undefined) throw new OperatorError(`pool ${args.name} not found among ${kinds.map((k) => k.plural).join(', ')}`)
      if (others.length > 0) throw new OperatorError(`pool ${args.name} exists as ${snapshot.entries.map((e) => `a ${e.kind.name}pool`).join(' and ')}: say which with --kind`)
      const [sightings, breaker] = await Promise.all([verdictEvents(session.kc, [entry.kind], args.name), latestBreakerEvent(session.kc, entry.kind)])
      const why = explainPool({kind: entry.kind, pool: entry.pool, lease: entry.lease, sightings, breaker, nowWall: Date.now()})
      this.log(poolWhyOutput(why, flags.output ?? 'text'))
      process.exitCode = WHY_EXIT_CODES[why.verdict]
      return why
    } catch (error) {
      reportFailure(error, {server: session?.server, debug: flags.debug})
      return undefined
    }
  }
}
