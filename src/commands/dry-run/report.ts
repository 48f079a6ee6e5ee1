import {Command, Flags} from '@oclif/core'
import {durationFlag, failUsage, withEnv} from '../../cli/flags.ts'
import type {KubeSession} from '../../cli/kube-session.ts'
import {operatorFlags, reportFailure} from '../../cli/operator-flags.ts'
import {agreement, formatDuration, POOL_KIND_NAMES, POOL_KINDS, WOULD_MARK_REASON, type Agreement} from '../../core/index.ts'

/** A dry run and the controller in charge see a death within a poll or two of each other; a minute is a different verdict. */
const DEFAULT_WINDOW_MS = 30_000

export default class DryRunReport extends Command {
  static override summary = "Compare a dry run's would-marks with the marks the controller in charge made."
  static override description = `Reads the Events: each ${WOULD_MARK_REASON} of \`controller --dry-run\` is paired with a mark of the same pool (same kind, name and UID) made within --window, by whichever controller is in charge (ironpool's or IronCore's lifecycle controller: the same Event reason); then the ones only one of them made, the agreement and the largest gap. Events live an hour by default (kube-apiserver --event-ttl), so that is the span it can compare. Every flag can also be set by an IRONPOOL_<FLAG> environment variable.`
  static override examples = ['<%= config.bin %> dry-run report', '<%= config.bin %> dry-run report --kind=machine --window=10s -o json']

  static override flags = withEnv({
    kind: Flags.option({options: POOL_KIND_NAMES, multiple: true, delimiter: ',', description: 'Pool kinds to compare. Default: every kind the API serves.'})(),
    window: durationFlag({description: `How far apart a mark and a would-mark of one pool may be to count as the same verdict; > 0. Default ${formatDuration(DEFAULT_WINDOW_MS)}.`, default: DEFAULT_WINDOW_MS}),
    since: durationFlag({description: 'Only marks and would-marks of the last this long (e.g. 30m). Default: every one the API still holds.'}),
    output: Flags.option({char: 'o', options: ['json', 'yaml'] as const, description: 'Print the report as JSON or YAML.'})(),
    ...operatorFlags(),
  })

  async run(): Promise<Agreement | undefined> {
    const {flags} = await this.parse(DryRunReport)
    const errors = [
      ...(flags.window > 0 ? [] : [`--window must be > 0 (got ${formatDuration(flags.window)})`]),
      ...(flags.since === undefined || flags.since > 0 ? [] : [`--since must be > 0 (got ${formatDuration(flags.since)})`]),
    ]
    if (errors.length > 0) failUsage(this, errors)
    let session: KubeSession | undefined
    try {
      const [{openSession}, {servedKinds}, {verdictEvents}, {agreementOutput}] = await Promise.all([
        import('../../cli/kube-session.ts'),
        import('../../kube/stores/served-kinds.ts'),
        import('../../kube/stores/verdict-events.ts'),
        import('../../cli/report/agreement-report.ts'),
      ])
      session = openSession({kubeconfig: flags.kubeconfig, context: flags.context})
      const kinds = await servedKinds(session.kc, Object.values(POOL_KINDS), flags.kind?.map((name) => POOL_KINDS[name]))
      const sightings = await verdictEvents(session.kc, kinds)
      const unknownReasons = new Set(kinds.map((k) => k.unknownReason))
      const marks = sightings.filter((s) => unknownReasons.has(s.reason) && s.record?.dryRun !== true)
      const wouldMarks = sightings.filter((s) => s.reason === WOULD_MARK_REASON)
      const result = agreement(marks, wouldMarks, flags.window, flags.since === undefined ? undefined : Date.now() - flags.since)
      this.log(agreementOutput(result, flags.output ?? 'text'))
      return result
    } catch (error) {
      reportFailure(error, {server: session?.server, debug: flags.debug})
      return undefined
    }
  }
}
