/**
 * A seed's faults as a timeline the simulated API and parties ask at each instant: is the API stalled,
 * are writes refused, how slow is an answer, is this party's request spoilt, does this write fail. A
 * fault is an interval [start, end) of simulated time with its class and parameters; the schedule
 * (schedule.ts) draws them from the seed.
 */

/** Who sends a request: a poollet (by pool index) or a controller replica (by index). */
export type PartyRef = {role: 'poollet'; index: number} | {role: 'controller'; index: number}

/** Whose requests a link fault spoils: every poollet, every replica, or one of either. */
export type LinkTarget = 'poollets' | 'controllers' | PartyRef

export type Fault =
  /** kube-apiserver SIGSTOPped: nothing is processed, nothing is sent, until the end. */
  | {class: 'stall'; start: number; end: number}
  /** etcd refuses every write (NOSPACE); reads answer. */
  | {class: 'refuse-writes'; start: number; end: number}
  /** Every answer takes this long to process (APF queueing, a loaded etcd); nothing fails. */
  | {class: 'slow'; start: number; end: number; latencyMs: number}
  /** Each request of the target is spoilt with probability rate: reset at once or lost (no answer). */
  | {class: 'loss'; start: number; end: number; target: LinkTarget; rate: number}
  /** A replica's watch of one resource is cut: reported after the gap tolerance; resumes, or relists when it cannot. */
  | {class: 'watch-gap'; start: number; end: number; replica: number; resource: 'pools' | 'leases'; relist: boolean}
  /** A replica's watch delivers each event this much late. */
  | {class: 'watch-lag'; start: number; end: number; replica: number; lagMs: number}
  /** A replica's watch stays open and delivers nothing; at the end it times out and relists. */
  | {class: 'watch-silence'; start: number; end: number; replica: number; resource: 'pools' | 'leases'}
  /** A replica's process is paused (SIGSTOP, a long GC, a starved VM). */
  | {class: 'controller-pause'; start: number; end: number; replica: number}
  /** A replica's process is killed at start and started again at end. */
  | {class: 'controller-restart'; start: number; end: number; replica: number}
  /** A poollet's process is paused. */
  | {class: 'poollet-pause'; start: number; end: number; pool: number}
  /** The controllers' Ready=Unknown writes to this pool fail: refused at once (422), a webhook's 500 after 2 s, or hang. */
  | {class: 'write-fail'; start: number; end: number; pool: number; how: 'reject' | 'error' | 'hang'}

export type FaultClass = Fault['class']

/**
 * What a lossy link does to one request: nothing ('ok'); resets it before it reaches the API ('reset');
 * swallows it, so it waits out its deadline ('lost'); or lets it reach the API and be applied, and
 * resets the connection before the answer ('unanswered': a write lands and its writer cannot know, as
 * the test proxy's lossy link does to kube-apiserver's answers).
 */
export type LinkOutcome = 'ok' | 'reset' | 'lost' | 'unanswered'

export class FaultTimeline {
  readonly faults: readonly Fault[]
  private readonly stalls: {start: number; end: number}[]

  constructor(faults: readonly Fault[]) {
    this.faults = faults
    this.stalls = faults.filter((f) => f.class === 'stall').sort((a, b) => a.start - b.start)
  }

  private active<C extends FaultClass>(cls: C, t: number): Extract<Fault, {class: C}>[] {
    return this.faults.filter((f): f is Extract<Fault, {class: C}> => f.class === cls && f.start <= t && t < f.end)
  }

  /** The first instant at or after t at which the API is not stalled. */
  unstalledAt(t: number): number {
    let at = t
    for (const s of this.stalls) if (s.start <= at && at < s.end) at = s.end
    return at
  }

  stalled(t: number): boolean {
    return this.unstalledAt(t) > t
  }

  writesRefused(t: number): boolean {
    return this.active('refuse-writes', t).length > 0
  }

  /** Processing time of a request arriving at t. */
  latencyMs(t: number): number {
    return Math.max(2, ...this.active('slow', t).map((f) => f.latencyMs))
  }

  /** Whether a request of party sent at t is spoilt, and how; random is the seed's. */
  link(party: PartyRef, t: number, random: () => number): LinkOutcome {
    for (const f of this.active('loss', t)) {
      if (!targets(f.target, party)) continue
      if (random() >= f.rate) continue
      // One draw, as before 'unanswered' came, so that a seed's other draws stay as they were; half of
      // the resets come after the request was applied. A party cut off (rate 1) reaches nothing.
      const how = random()
      if (how < 0.25 && f.rate < 1) return 'unanswered'
      return how < 0.5 ? 'reset' : 'lost'
    }
    return 'ok'
  }

  /** How a controller's write to pool at t fails, if it does. */
  writeFailure(pool: number, t: number): 'reject' | 'error' | 'hang' | undefined {
    return this.active('write-fail', t).find((f) => f.pool === pool)?.how
  }

  watchLagMs(replica: number, t: number): number {
    return Math.max(0, ...this.active('watch-lag', t).filter((f) => f.replica === replica).map((f) => f.lagMs))
  }

  /** Whether the given party's own link is spoilt entirely at t (rate 1). */
  cutOff(party: PartyRef, t: number): boolean {
    return this.active('loss', t).some((f) => f.rate >= 1 && targets(f.target, party))
  }
}

export function targets(target: LinkTarget, party: PartyRef): boolean {
  if (target === 'poollets') return party.role === 'poollet'
  if (target === 'controllers') return party.role === 'controller'
  return target.role === party.role && target.index === party.index
}
