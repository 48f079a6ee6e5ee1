/**
 * The one owner of order, shutdown and leadership, after controller-runtime's manager
 * (pkg/manager/internal.go, runnable_group.go), cut down to ordered groups:
 *
 *   start: servers → caches → others (each group waits for the previous one's waitReady), then the
 *          leader-only runnables once leadership is won (at once without leader election);
 *   lost:  the leader-only runnables are stopped (under the shutdown deadline), and the replica is a
 *          standby again: caches, sight and evidence kept, it campaigns anew (campaignWhen first);
 *   stop:  leader-only → leader election (so the Lease is released only after writes ended) →
 *          others → caches → servers, all under one deadline.
 *
 * Where controller-runtime exits on lost leadership (its goroutines cannot be stopped for sure), the
 * leader-only work here ends on its signal and is awaited: a replica that exited started again with
 * nothing and waited a grace period of evidence before it could lead, so an outage that cost every
 * replica its lease held dead pools a grace period past their bound (the simulator: seeds 66490 and
 * 81099, plus CrashLoopBackOff's 10 s doubling on a real Deployment). Only leader-only work that
 * outlives the deadline still ends the process.
 *
 * run() resolves after a clean stop on its signal, and rejects with RunnableFailedError when a
 * runnable failed, LeadershipLostError when leadership was lost and leader-only work would not stop
 * within the deadline, or ShutdownTimeoutError when runnables outlived the deadline: the command turns
 * each rejection into a non-zero exit.
 */
import {systemClock, type Clock, errorMessage, type Logger} from '../core/index.ts'
import {LeadershipLostError, RunnableFailedError, ShutdownTimeoutError} from './errors.ts'
import {RUNNABLE_GROUPS, isCancellation, type LeaderElection, type Runnable} from './runnable.ts'

/** A few seconds, as DESIGN.md's SIGTERM rule wants; well inside kubelet's default 30 s grace. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 5_000

export interface ManagerOptions {
  logger: Logger
  /** How long stopping may take in all. Default DEFAULT_SHUTDOWN_TIMEOUT_MS. */
  shutdownTimeoutMs?: number
  /** Gates runnables with needLeaderElection. Absent: they start with the others. */
  leaderElection?: LeaderElection
  /** Awaited before each campaign, the first and each after a lost leadership (e.g. evidence warm-up). */
  campaignWhen?: (signal: AbortSignal) => Promise<void>
  /** Test seam for the shutdown deadline. Default: the system clock. */
  clock?: Clock
}

type StopReason = {kind: 'signal'} | {kind: 'failed'; error: RunnableFailedError} | {kind: 'lost'}

interface Running {
  name: string
  finished: boolean
  done: Promise<void>
}

interface Group {
  controller: AbortController
  running: Running[]
}

export class Manager {
  private readonly options: ManagerOptions
  private readonly runnables: Runnable[] = []
  private started = false

  constructor(options: ManagerOptions) {
    this.options = options
  }

  add(runnable: Runnable): void {
    // Runnables added later would miss their group's start; controller-runtime allows it, nothing here needs it.
    if (this.started) throw new Error(`cannot add ${runnable.name}: the manager has started`)
    this.runnables.push(runnable)
  }

  async run(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error('the manager runs once')
    this.started = true
    const {logger, leaderElection} = this.options
    let reason: StopReason | undefined
    const stop = Promise.withResolvers<StopReason>()
    const requestStop = (why: StopReason) => {
      if (reason !== undefined) return
      reason = why
      stop.resolve(why)
    }
    const fail = (name: string, error: unknown) => requestStop({kind: 'failed', error: new RunnableFailedError(name, error)})
    const onSignal = () => requestStop({kind: 'signal'})
    if (signal.aborted) onSignal()
    else signal.addEventListener('abort', onSignal, {once: true})

    const launch = (group: Group, runnable: Runnable, runSignal = group.controller.signal) => {
      const entry: Running = {name: runnable.name, finished: false, done: Promise.resolve()}
      entry.done = Promise.resolve()
        .then(() => runnable.start(runSignal))
        .then(
          () => logger.debug({runnable: runnable.name}, 'runnable returned'),
          (error: unknown) => {
            if (isCancellation(error, runSignal)) return
            // After the stop began, the first reason stands and a later error is only reported.
            if (reason !== undefined) logger.error({runnable: runnable.name, err: errorMessage(error)}, 'runnable failed while stopping')
            else fail(runnable.name, error)
          },
        )
        .finally(() => (entry.finished = true))
      group.running.push(entry)
    }

    const groups: Group[] = RUNNABLE_GROUPS.map(() => newGroup())
    // One group per term of leadership; the stop sequence stops whichever is current.
    let leaderOnly = newGroup()
    const election = newGroup()

    for (const [i, name] of RUNNABLE_GROUPS.entries()) {
      const group = groups[i] as Group
      const members = this.runnables.filter((r) => !r.needLeaderElection && (r.group ?? 'others') === name)
      for (const runnable of members) launch(group, runnable)
      const ready = members.map(async (r) => {
        try {
          await r.waitReady?.(group.controller.signal)
        } catch (error) {
          if (!isCancellation(error, group.controller.signal)) fail(r.name, error)
        }
      })
      await Promise.race([Promise.all(ready), stop.promise])
      if (reason !== undefined) break
    }

    const startLeading = (leaderSignal: AbortSignal) => {
      if (reason !== undefined) return
      if (leaderElection !== undefined) logger.info({}, 'started leading')
      const term = leaderOnly
      const runSignal = AbortSignal.any([term.controller.signal, leaderSignal])
      for (const runnable of this.runnables.filter((r) => r.needLeaderElection)) launch(term, runnable, runSignal)
    }
    if (reason === undefined && leaderElection !== undefined) {
      const entry: Running = {name: 'leader-election', finished: false, done: Promise.resolve()}
      entry.done = this.campaign(election.controller.signal, leaderElection, startLeading, async () => {
        // Stop writes before anything else awaits: the next leader may already be writing.
        const term = leaderOnly
        term.controller.abort(new LeadershipLostError())
        const stuck = await this.stopWithin([term])
        // The next term's group; the stuck one has had its deadline and is not waited for again.
        leaderOnly = newGroup()
        if (stuck.length > 0) {
          logger.error({stillRunning: stuck, timeoutMs: this.shutdownTimeoutMs()}, 'leadership lost and leader-only work did not stop within the shutdown deadline: exiting')
          requestStop({kind: 'lost'})
          return false
        }
        logger.info({}, 'leadership lost: leader-only work stopped; a standby again, with caches and evidence kept, campaigning anew')
        return reason === undefined
      })
        .catch((error: unknown) => {
          if (!isCancellation(error, election.controller.signal)) fail('leader-election', error)
        })
        .finally(() => (entry.finished = true))
      election.running.push(entry)
    } else if (reason === undefined) {
      startLeading(new AbortController().signal)
    }

    const why = await stop.promise
    signal.removeEventListener('abort', onSignal)
    logger.info({reason: why.kind === 'failed' ? why.error.message : why.kind}, 'stopping')
    const stillRunning = await this.stopWithin([leaderOnly, election, ...groups.reverse()])
    if (stillRunning.length > 0) {
      logger.error({stillRunning, timeoutMs: this.shutdownTimeoutMs()}, 'shutdown deadline passed with runnables still running')
    }
    if (why.kind === 'failed') throw why.error
    if (why.kind === 'lost') throw new LeadershipLostError()
    if (stillRunning.length > 0) throw new ShutdownTimeoutError(stillRunning, this.shutdownTimeoutMs())
    logger.info({}, 'stopped')
  }

  /**
   * Campaigns until signal aborts: campaignWhen, then the election; after a lost leadership, again
   * while onLost() says so.
   */
  private async campaign(signal: AbortSignal, leaderElection: LeaderElection, startLeading: (leaderSignal: AbortSignal) => void, onLost: () => Promise<boolean>): Promise<void> {
    for (;;) {
      await this.options.campaignWhen?.(signal)
      if (signal.aborted) return
      if ((await leaderElection(signal, startLeading)) !== 'lost' || signal.aborted) return
      if (!(await onLost())) return
    }
  }

  /** Aborts each group and waits for it in turn, all under one deadline; returns the names that outlived it. */
  private async stopWithin(order: Group[]): Promise<string[]> {
    const clock = this.options.clock ?? systemClock
    const deadline = Promise.withResolvers<'deadline'>()
    const cancel = clock.setTimer(this.shutdownTimeoutMs(), () => deadline.resolve('deadline'))
    try {
      for (const [i, group] of order.entries()) {
        group.controller.abort()
        const outcome = await Promise.race([Promise.all(group.running.map((r) => r.done)), deadline.promise])
        if (outcome === 'deadline') {
          // Out of time: tell the rest to stop, but wait for none of it. The names reported are the
          // group that overran; the later groups, just aborted, are not yet known to be stuck.
          for (const later of order.slice(i + 1)) later.controller.abort()
          return group.running.filter((r) => !r.finished).map((r) => r.name)
        }
      }
      return []
    } finally {
      cancel()
    }
  }

  private shutdownTimeoutMs(): number {
    return this.options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS
  }
}

function newGroup(): Group {
  return {controller: new AbortController(), running: []}
}
