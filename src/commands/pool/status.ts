import {Args, Command, Flags} from '@oclif/core'
import {colourEnabled} from '../../cli/colour.ts'
import {failUsage, withEnv} from '../../cli/flags.ts'
import type {KubeSession} from '../../cli/kube-session.ts'
import {operatorFlags, reportFailure} from '../../cli/operator-flags.ts'
import {OperatorError} from '../../cli/operator-errors.ts'
import {OUTPUT_FORMATS, type PoolStatusResult} from '../../cli/report/pool-status-printer.ts'
import type {PoolWatchOptions} from '../../kube/watch/caches/pool-view-watch.ts'
import type {SignalHandler} from '../../runtime/signals.ts'
import {dryRunNote, POOL_KIND_NAMES, POOL_KINDS, poolView, WOULD_MARK_REASON, type VerdictSighting} from '../../core/index.ts'

export default class PoolStatus extends Command {
  static override summary = 'Show whether pools are alive: Ready beside the Lease, kubectl-style.'
  static override description = `Lists pools with their Ready condition (status, reason, age of the last transition) and their Lease (holder, age of the last renewal, duration, whether it looks expired). Ages compare the poollets' timestamps with the local clock and are display only; a timestamp in the future is marked "!" and explained. Every flag can also be set by an IRONPOOL_<FLAG> environment variable.`
  static override enableJsonFlag = true
  static override args = {names: Args.string({description: 'Pool names; all pools when none is given.'})}
  static override strict = false
  static override examples = [
    '<%= config.bin %> pool status',
    '<%= config.bin %> pool status p1 p2 --kind=machine -o wide',
    '<%= config.bin %> pool status --watch',
    '<%= config.bin %> pool status --fail-on-not-ready --no-headers',
  ]

  static override flags = withEnv({
    kind: Flags.option({options: POOL_KIND_NAMES, multiple: true, delimiter: ',', description: 'Pool kinds to show (repeat or comma-separate). Default: every kind the API serves.'})(),
    selector: Flags.string({char: 'l', description: 'Label selector, e.g. zone=a,tier!=gpu.'}),
    output: Flags.option({char: 'o', options: OUTPUT_FORMATS, description: 'wide adds MESSAGE and NOTES; json and yaml print the views.'})(),
    watch: Flags.boolean({char: 'w', description: 'After the table, print a row whenever a pool changes, until Ctrl-C.', default: false, exclusive: ['fail-on-not-ready']}),
    'no-headers': Flags.boolean({description: 'Print the table without its header line.', default: false}),
    'fail-on-not-ready': Flags.boolean({description: 'Exit 1 when any listed pool is not Ready=True (for scripts and probes).', default: false}),
    ...operatorFlags(),
  })

  async run(): Promise<PoolStatusResult | undefined> {
    const {argv, flags} = await this.parse(PoolStatus)
    const names = argv as string[]
    // Checked here, not with oclif's `exclusive`: under --json its parse error prints the whole CLI config.
    if (flags.watch && this.jsonEnabled()) failUsage(this, ['--watch prints a stream, --json one document: use --watch -o json for one JSON object per change'])
    let session: KubeSession | undefined
    try {
      // Imported once the flags are valid: a usage error exits before client-node loads.
      const [{openSession}, {servedKinds}, {readPools}, {controllerViewNotes}, {markableKinds}, {PoolStatusPrinter}, {probeEventNotes}] = await Promise.all([
        import('../../cli/kube-session.ts'),
        import('../../kube/stores/served-kinds.ts'),
        import('../../kube/stores/pool-snapshot.ts'),
        import('../../kube/stores/controller-view-notes.ts'),
        import('../../kube/stores/served-schema.ts'),
        import('../../cli/report/pool-status-printer.ts'),
        import('../../kube/stores/probe-event-notes.ts'),
      ])
      const {verdictEvents} = await import('../../kube/stores/verdict-events.ts')
      session = openSession({kubeconfig: flags.kubeconfig, context: flags.context})
      const kinds = await servedKinds(session.kc, Object.values(POOL_KINDS), flags.kind?.map((name) => POOL_KINDS[name]))
      // Asked beside the pools, not after them: the note costs no extra round trip of waiting.
      const notes = controllerViewNotes(session.kc, kinds, Date.now())
      const canMark = markableKinds(session.kc, kinds)
      const snapshot = await readPools(session.kc, kinds, {selector: flags.selector, names})
      const markable = await canMark
      // Where the API has no conditions, the runtime's news is only in the poollet's probe Events: the latest, as a note.
      const probeNotes = await probeEventNotes(session.kc, kinds.filter((kind) => !markable.has(kind.name)), Date.now())
      // A dry run beside the controller in charge: what it would do, per pool (display only; left out when the Events cannot be read).
      const wouldMarks = byPool(await verdictEvents(session.kc, kinds, undefined, () => [WOULD_MARK_REASON]).catch(() => []))
      const views = snapshot.entries.map((e) => {
        const view = poolView(e.kind, e.pool, e.lease, Date.now(), {canMark: markable.has(e.kind.name)})
        const note = probeNotes.get(`${e.kind.name}/${e.pool.metadata.name}`)
        if (note !== undefined) view.notes.push(note)
        const dryRun = dryRunNote(e.kind, e.pool, e.lease, wouldMarks.get(`${e.kind.name}/${e.pool.metadata.name}`) ?? [])
        if (dryRun !== undefined) view.notes.push(dryRun)
        return view
      })
      const printer = new PoolStatusPrinter({
        format: this.jsonEnabled() ? 'json' : (flags.output ?? 'table'),
        headers: !flags['no-headers'],
        colour: colourEnabled(process.stdout, process.env),
        out: (line) => process.stdout.write(`${line}\n`),
        err: (line) => process.stderr.write(`${line}\n`),
      })
      for (const line of snapshot.malformed) process.stderr.write(`warning: ${line}\n`)
      for (const line of await notes) process.stderr.write(`note: ${line}\n`)
      // --watch: SIGTERM and SIGINT are handled from before the first table is printed, so that a signal
      // sent once the table is seen always stops the watch cleanly (exit 0) rather than killing it.
      const signals = flags.watch ? (await import('../../runtime/signals.ts')).setupSignalHandler() : undefined
      if (!this.jsonEnabled()) printer.printAll(views, flags.watch)
      if (snapshot.missing.length > 0) {
        signals?.dispose()
        throw new OperatorError(`pool ${snapshot.missing.join(', ')} not found among ${kinds.map((k) => k.plural).join(', ')}`)
      }
      if (signals !== undefined) {
        await follow({kc: session.kc, kinds, names, selector: flags.selector, printed: views, canMark: (kind) => markable.has(kind.name), onChange: (view) => printer.printChange(view)}, signals)
        return undefined
      }
      if (flags['fail-on-not-ready'] && views.some((view) => view.ready !== 'True')) process.exitCode = 1
      return {pools: views}
    } catch (error) {
      reportFailure(error, {server: session?.server, debug: flags.debug})
      return undefined
    }
  }
}

/** Sightings per pool, keyed "kind/name". */
function byPool(sightings: ReadonlyArray<VerdictSighting & {kind: string; pool: string}>): Map<string, VerdictSighting[]> {
  const map = new Map<string, VerdictSighting[]>()
  for (const s of sightings) map.set(`${s.kind}/${s.pool}`, [...(map.get(`${s.kind}/${s.pool}`) ?? []), s])
  return map
}

/** Runs the watch until SIGINT or SIGTERM; the caches' warnings (API away, relists) go to stderr. */
async function follow(options: Omit<PoolWatchOptions, 'logger'>, signals: SignalHandler): Promise<void> {
  try {
    const [{watchPools}, {createLogger}] = await Promise.all([import('../../kube/watch/caches/pool-view-watch.ts'), import('../../observe/logger.ts')])
    await watchPools({...options, logger: createLogger({level: 'warn'})}, signals.signal)
  } finally {
    signals.dispose()
  }
}
