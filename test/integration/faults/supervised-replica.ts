/**
 * A controller replica as the shipped Deployment runs it: a process that the kubelet starts again when
 * it exits (a replica that loses leadership stays up as a standby; one whose leader-only work would
 * not stop in time exits non-zero), after the
 * kubelet's CrashLoopBackOff: 10 s, doubling, at most 5 min, reset once a run has lasted 10 min. Every
 * run's log is kept, in order, for the marks and leadership changes of the replica as a whole.
 */
import {ControllerProcess} from '../../support/controller-env.ts'
import {logLines, type LogLine} from './fault-fleet.ts'

/** The kubelet's CrashLoopBackOff (pkg/kubelet/kuberuntime: initial 10 s, max 300 s, reset after 10 min). */
export const CRASH_LOOP_BACKOFF = {initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000}

export class SupervisedReplica {
  /** Every run, oldest first; the last is the one running (or waiting out its backoff). */
  readonly runs: ControllerProcess[] = []
  /** How each run before the last ended. */
  readonly exits: {code: number | null; signal: string | null}[] = []
  private stopped = false
  private backoffMs = CRASH_LOOP_BACKOFF.initialMs
  private restart: NodeJS.Timeout | undefined
  private supervising: Promise<void> = Promise.resolve()

  private readonly args: readonly string[]

  constructor(args: readonly string[]) {
    this.args = args
    this.start()
  }

  get current(): ControllerProcess | undefined {
    return this.runs.at(-1)
  }

  /** Log lines of every run, each run's in its own order, runs in order. */
  lines(): (LogLine & {run: number})[] {
    return this.runs.flatMap((run, i) => logLines(run, 0).map((line) => ({...line, run: i})))
  }

  /** Pools this replica marked Unknown, over all its runs. */
  marked(): string[] {
    return this.runs.flatMap((run) => run.marked())
  }

  /** How often it gained leadership, over all its runs. */
  get leaderships(): number {
    return this.lines().filter((l) => l.msg.startsWith('acquired leader lease')).length
  }

  /** How often it lost leadership, over all its runs. */
  get losses(): number {
    return this.lines().filter((l) => l.msg.startsWith('lost leader lease')).length
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.restart)
    await this.current?.stop()
    await this.supervising
  }

  private start(): void {
    const run = new ControllerProcess(this.args)
    const startedAt = Date.now()
    this.runs.push(run)
    this.supervising = run.exited.then((exit) => {
      if (this.stopped) return
      this.exits.push(exit)
      if (Date.now() - startedAt >= CRASH_LOOP_BACKOFF.resetAfterMs) this.backoffMs = CRASH_LOOP_BACKOFF.initialMs
      const delay = this.backoffMs
      this.backoffMs = Math.min(this.backoffMs * 2, CRASH_LOOP_BACKOFF.maxMs)
      this.restart = setTimeout(() => {
        if (!this.stopped) this.start()
      }, delay)
    })
  }
}
