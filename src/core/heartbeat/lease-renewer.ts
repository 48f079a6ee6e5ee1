/**
 * Keeps one pool's Lease renewed, after Kubernetes' lease controller
 * (component-helpers/apimachinery/lease/controller.go): create it when missing, renew it with the
 * Lease our last write returned (no read in steady state), answer a conflict by reading again, and take
 * over a Lease that another identity holds. One call is one attempt to renew; the caller's loop is the
 * long-term retry, so nothing here sleeps.
 *
 * A good neighbour (issue 21): a Lease found held by another identity when this process first comes to
 * it is taken over at once, as IEP-15 says a restarted poollet takes its predecessor's (a predecessor
 * is dead and never writes again). But once this process has held the Lease, another holder's write
 * means a live rival (a second heartbeat writer, e.g. IronCore's machinepoollet, which takes the Lease
 * back on every tick): then it yields instead of fighting, reads the Lease each call, and takes it
 * again only once the rival has left it unrenewed for the rival's own leaseDurationSeconds, judged on
 * this process's monotonic clock from when it last saw the Lease change, as client-go's leader
 * election does (never the rival's renewTime against this clock).
 */
import type {Clock} from '../clock.ts'
import {formatMicroTime} from '../conditions.ts'
import {AlreadyExistsError, ConflictError, NotFoundError} from '../errors.ts'
import type {LeaseStore, Logger} from '../ports.ts'
import type {Lease} from '../types.ts'

/**
 * Attempts per renew() call, for any error, as Kubernetes' lease controller makes them
 * (maxUpdateRetries = 5, retryUpdateLease): a conflict (or a race on create or delete) reads the Lease
 * again first; any other error (a timeout, a 500, a reset connection) is tried again at once, so that
 * an API that answers part of the time renews within one call. Past that, the caller backs off
 * (Heartbeat: 200 ms doubling to 7 s, within the Lease duration).
 */
export const LEASE_WRITE_ATTEMPTS = 5

/** IronCore's poollet identity: the pool name and a random UUID, fixed for the life of the process. */
export function defaultHolderIdentity(pool: string, uuid: string): string {
  return `${pool}_${uuid}`
}

export interface LeaseRenewerOptions {
  store: LeaseStore
  clock: Clock
  logger: Logger
  /** The Lease's name: the pool's name. */
  name: string
  /** The kind's lease namespace, e.g. ironcore-machinepool-lease. */
  namespace: string
  holderIdentity: string
  leaseDurationSeconds: number
  /** Default {@link LEASE_WRITE_ATTEMPTS}. */
  attempts?: number
}

export type LeaseRenewal =
  | {outcome: 'created'; lease: Lease}
  | {outcome: 'renewed'; lease: Lease}
  /** previousHolder is absent when the Lease had no holder. */
  | {outcome: 'took-over'; lease: Lease; previousHolder?: string}
  /**
   * Another live holder renews the Lease: nothing written. first: this call began the yield (report it
   * once). expiresInMs: how long the rival's Lease must stay unchanged before it is taken again.
   */
  | {outcome: 'yielded'; lease: Lease; holder: string; first: boolean; expiresInMs: number}
  /** action names the call that failed, e.g. "update lease ironcore-machinepool-lease/p1". */
  | {outcome: 'error'; error: unknown; action: string; attempts: number}

type Verb = 'get' | 'create' | 'update'

export class LeaseRenewer {
  private readonly options: LeaseRenewerOptions
  private readonly attempts: number
  /**
   * The Lease as our last successful write returned it. Renewing from it saves a read per tick as long
   * as nobody else writes the Lease; if others start writing it often, every renewal costs a conflict
   * and a read, and this shortcut should go (the lease controller's note on the same fast path).
   */
  private latest: Lease | undefined
  /** Whether this process has written the Lease as its holder: from then on, another holder is a rival. */
  private held = false
  /** While yielding: the rival's Lease as last seen, and when (monotonic) it was last seen to change. */
  private rival: {holder: string; seen: string; changedAt: number} | undefined

  constructor(options: LeaseRenewerOptions) {
    this.options = options
    this.attempts = options.attempts ?? LEASE_WRITE_ATTEMPTS
  }

  /**
   * Never rejects: failures come back as an 'error' outcome naming the call that failed. until: no
   * attempt starts at or after this instant (monotonic), so a caller's budget bounds the retries.
   */
  async renew(signal?: AbortSignal, until = Number.POSITIVE_INFINITY, attempts = this.attempts): Promise<LeaseRenewal> {
    const {store, name} = this.options
    let verb: Verb = 'get'
    for (let attempt = 1; ; attempt++) {
      try {
        verb = 'get'
        const base = this.latest ?? (await store.get(name))
        if (base === undefined) {
          verb = 'create'
          const lease = await store.create(this.newLease())
          this.latest = lease
          this.held = true
          this.rival = undefined
          return {outcome: 'created', lease}
        }
        const previousHolder = base.spec.holderIdentity
        const takeover = previousHolder !== this.options.holderIdentity
        if (takeover && previousHolder) {
          const yielded = this.yieldTo(base, previousHolder)
          if (yielded !== undefined) return yielded
        }
        verb = 'update'
        const lease = await store.update(takeover ? this.takenOver(base) : this.renewed(base))
        this.latest = lease
        this.held = true
        const expired = this.rival
        this.rival = undefined
        if (!takeover) return {outcome: 'renewed', lease}
        this.logTakeover(previousHolder, expired !== undefined && expired.holder === previousHolder)
        return {outcome: 'took-over', lease, previousHolder}
      } catch (error) {
        // Each of these means the Lease moved under us: forget it and read it again. (A NotFoundError on
        // create is not one: that is a missing namespace, which reading again will not mend.)
        const raced =
          error instanceof ConflictError ||
          (verb === 'create' && error instanceof AlreadyExistsError) ||
          (verb === 'update' && error instanceof NotFoundError)
        if (raced) this.latest = undefined
        if (attempt >= attempts || signal?.aborted || this.options.clock.monotonic() >= until) {
          return {outcome: 'error', error, action: `${verb} lease ${this.options.namespace}/${name}`, attempts: attempt}
        }
      }
    }
  }

  /**
   * The yield, if base is held by a live rival: another identity than ours wrote it after this process
   * held it (or while it yields, and the rival has renewed within its duration). Undefined: take it.
   */
  private yieldTo(base: Lease, holder: string): LeaseRenewal | undefined {
    const {clock} = this.options
    if (!this.held) return undefined // the Lease as this process found it: a predecessor's, taken at once
    const now = clock.monotonic()
    const seen = `${holder}\u0000${base.resourceVersion ?? ''}\u0000${base.spec.renewTime ?? ''}`
    const first = this.rival === undefined
    if (this.rival === undefined || this.rival.seen !== seen) this.rival = {holder, seen, changedAt: now}
    const durationMs = (base.spec.leaseDurationSeconds ?? this.options.leaseDurationSeconds) * 1000
    const expiresInMs = this.rival.changedAt + durationMs - now
    if (expiresInMs <= 0) return undefined
    this.latest = undefined // read again each call while yielding: nothing of ours to renew
    return {outcome: 'yielded', lease: base, holder, first, expiresInMs}
  }

  private now(): string {
    return formatMicroTime(new Date(this.options.clock.wall()))
  }

  private newLease(): Lease {
    const now = this.now()
    return {
      name: this.options.name,
      namespace: this.options.namespace,
      spec: {
        holderIdentity: this.options.holderIdentity,
        leaseDurationSeconds: this.options.leaseDurationSeconds,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: 0,
      },
    }
  }

  /** Our Lease with a fresh renewTime; everything else, resourceVersion included, as last seen. */
  private renewed(base: Lease): Lease {
    return {
      ...base,
      spec: {...base.spec, leaseDurationSeconds: this.options.leaseDurationSeconds, renewTime: this.now()},
    }
  }

  /** Someone else's Lease made ours, as client-go's leader election does it. */
  private takenOver(base: Lease): Lease {
    const now = this.now()
    return {
      ...base,
      spec: {
        ...base.spec,
        holderIdentity: this.options.holderIdentity,
        leaseDurationSeconds: this.options.leaseDurationSeconds,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: (base.spec.leaseTransitions ?? 0) + 1,
      },
    }
  }

  private logTakeover(previousHolder: string | undefined, expired: boolean): void {
    const {namespace, name, holderIdentity} = this.options
    this.options.logger.info(
      {lease: `${namespace}/${name}`, previousHolder: previousHolder ?? null, holderIdentity},
      previousHolder
        ? `took over lease ${namespace}/${name} from ${previousHolder}${expired ? ', which left it unrenewed for its lease duration' : ''}`
        : `took over lease ${namespace}/${name}, which had no holder`,
    )
  }
}
