import {Args, Command, Flags} from '@oclif/core'
import {withEnv} from '../../cli/flags.ts'
import type {KubeSession} from '../../cli/kube-session.ts'
import {inspectLease, type LeaseInspection} from '../../cli/report/lease-inspection.ts'
import {leaseReport} from '../../cli/report/lease-report.ts'
import {OperatorError} from '../../cli/operator-errors.ts'
import {operatorFlags, reportFailure} from '../../cli/operator-flags.ts'
import {POOL_KIND_NAMES, POOL_KINDS} from '../../core/index.ts'

export default class LeaseInspect extends Command {
  static override summary = "Explain one pool's Lease beside the pool's Ready condition."
  static override description = `Shows the Lease's holder, acquire and renew times, duration, when it would expire by the local clock, transitions and resourceVersion, and the pool's Ready condition beside it. Says plainly when the pool or the Lease does not exist (exit 1) or when the holder is not the pool's poollet (<pool>_<uuid>). Every flag can also be set by an IRONPOOL_<FLAG> environment variable.`
  static override enableJsonFlag = true
  static override args = {name: Args.string({description: 'The pool (and Lease) name.', required: true})}
  static override examples = ['<%= config.bin %> lease inspect p1', '<%= config.bin %> lease inspect v1 --kind=volume --json']

  static override flags = withEnv({
    kind: Flags.option({options: POOL_KIND_NAMES, default: 'machine' as const, description: 'Pool kind.'})(),
    ...operatorFlags(),
  })

  async run(): Promise<LeaseInspection | undefined> {
    const {args, flags} = await this.parse(LeaseInspect)
    const kind = POOL_KINDS[flags.kind]
    let session: KubeSession | undefined
    try {
      // Imported once the flags are parsed: a usage error exits before client-node loads.
      const [{openSession}, {servedKinds}, {createLeaseStore}, {createPoolStatusStore}] = await Promise.all([
        import('../../cli/kube-session.ts'),
        import('../../kube/stores/served-kinds.ts'),
        import('../../kube/stores/lease-store.ts'),
        import('../../kube/stores/pool-status-store.ts'),
      ])
      session = openSession({kubeconfig: flags.kubeconfig, context: flags.context})
      // A GET cannot tell a missing pool from a missing CRD (both 404): ask discovery first.
      await servedKinds(session.kc, [kind], [kind])
      const [pool, lease] = await Promise.all([createPoolStatusStore(session.kc, kind).get(args.name), createLeaseStore(session.kc, kind.leaseNamespace).get(args.name)])
      const inspection = inspectLease(kind, args.name, pool, lease, Date.now())
      if (pool === undefined && lease === undefined) throw new OperatorError(`${inspection.problems.join('; and ')}`)
      this.log(leaseReport(inspection).join('\n'))
      if (inspection.missing) reportFailure(new OperatorError(inspection.problems[0] ?? 'missing'), {debug: false})
      return inspection
    } catch (error) {
      reportFailure(error, {server: session?.server, debug: flags.debug})
      return undefined
    }
  }
}
