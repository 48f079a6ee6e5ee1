/**
 * The simulated kube-apiserver and etcd: pools and Leases with resourceVersions, optimistic
 * concurrency, a watch stream, and the seed's faults applied to every request. A request travels
 * (1 ms), waits out a stall, is processed (its effect is atomic at that instant), and its answer
 * travels back to the party, which may be paused; the party's own deadline rejects it first if the
 * answer is late. A write that timed out at the client may still have landed, as on a real server.
 */
import {AlreadyExistsError, ConflictError, NotFoundError, RejectedError} from '../src/core/errors.ts'
import type {Lease, Pool, PoolCondition} from '../src/core/types.ts'
import type {LeaseStore, PoolStatusStore} from '../src/core/ports.ts'
import type {FaultTimeline, LinkOutcome, PartyRef} from './faults.ts'
import type {PartyClock, SimClock} from './sim-clock.ts'

const NET_MS = 1

/** A committed change; rv is the revision it was committed at. */
export type WatchEvent = ({resource: 'pools'; type: 'upsert' | 'delete'; object: Pool} | {resource: 'leases'; type: 'upsert' | 'delete'; object: Lease}) & {rv: number}
type Change = WatchEvent extends infer E ? (E extends WatchEvent ? Omit<E, 'rv'> : never) : never

/** What the oracle hears: every committed change, by whom, and every request that left a party. */
export interface ApiObserver {
  committed?(event: WatchEvent, by: PartyRef, at: number): void
  /** A request of party sent at `at` whose fate on the party's own link is `outcome`. */
  sent?(by: PartyRef, op: string, at: number, outcome: LinkOutcome): void
  /** The request of party sent at `at` met a conflict: the object had moved on since the party read it. */
  conflicted?(by: PartyRef, op: string, at: number): void
}

export interface Party {
  ref: PartyRef
  clock: PartyClock
  /** The party's request deadline, as its edge sets it. */
  timeoutMs: number
}

/** A request: its effect (atomic at processing), whether it writes, and how a failing webhook bends it. */
type Op<T> = {name: string; write: boolean; apply: () => T; hang?: boolean; extraMs?: number}

export class SimApi {
  private readonly sim: SimClock
  private readonly faults: FaultTimeline
  private readonly random: () => number
  private revision = 0
  readonly pools = new Map<string, Pool>()
  readonly leases = new Map<string, Lease>()
  private readonly watchers = new Set<(event: WatchEvent) => void>()
  observer: ApiObserver = {}

  constructor(sim: SimClock, faults: FaultTimeline, random: () => number) {
    this.sim = sim
    this.faults = faults
    this.random = random
  }

  get resourceVersion(): string {
    return String(this.revision)
  }

  /** Hears every committed change at its commit; the watch (sim-cache.ts) adds delays and faults. */
  watch(fn: (event: WatchEvent) => void): () => void {
    this.watchers.add(fn)
    return () => this.watchers.delete(fn)
  }

  /** The instant an answer sent at t leaves a stalled server. */
  sendAt(t: number): number {
    return this.faults.unstalledAt(t)
  }

  // ---- objects, set up by the harness (no faults) ----

  putPool(pool: Pool, by: PartyRef): Pool {
    const stored = {...structuredClone(pool), metadata: {...pool.metadata, resourceVersion: String(++this.revision)}}
    this.pools.set(pool.metadata.name, stored)
    this.emit({resource: 'pools', type: 'upsert', object: stored}, by)
    return stored
  }

  deletePool(name: string, by: PartyRef): void {
    const pool = this.pools.get(name)
    if (pool === undefined) return
    this.pools.delete(name)
    ++this.revision
    this.emit({resource: 'pools', type: 'delete', object: pool}, by)
  }

  private emit(change: Change, by: PartyRef): void {
    const event = {...change, rv: this.revision}
    this.observer.committed?.(event, by, this.sim.now())
    for (const w of [...this.watchers]) w(event)
  }

  // ---- requests ----

  /**
   * Sends op for party: resolves or rejects on the party's clock, never later than its deadline or
   * after signal aborted.
   */
  request<T>(party: Party, op: Op<T>, signal?: AbortSignal): Promise<T> {
    const sentAt = this.sim.now()
    const outcome = this.faults.link(party.ref, sentAt, this.random)
    this.observer.sent?.(party.ref, op.name, sentAt, outcome)
    return new Promise<T>((resolve, reject) => {
      let settled = false
      const cancels: (() => void)[] = []
      const finish = (fn: () => void) => {
        if (settled) return
        settled = true
        for (const c of cancels) c()
        signal?.removeEventListener('abort', onAbort)
        fn()
      }
      const onAbort = () => finish(() => reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted')))
      if (signal?.aborted) {
        onAbort()
        return
      }
      signal?.addEventListener('abort', onAbort, {once: true})
      cancels.push(party.clock.setTimer(party.timeoutMs, () => finish(() => reject(new Error(`${op.name}: no answer within ${party.timeoutMs} ms (request deadline)`)))))
      if (outcome === 'lost') return
      if (outcome === 'reset') {
        cancels.push(party.clock.setTimer(NET_MS, () => finish(() => reject(new Error(`${op.name}: connection reset by peer`)))))
        return
      }
      const arrives = sentAt + NET_MS
      const processAt = this.faults.unstalledAt(arrives)
      this.sim.at(processAt, () => {
        if (op.hang === true) return
        const latency = this.faults.latencyMs(processAt) + (op.extraMs ?? 0)
        let answer: () => void
        if (op.write && this.faults.writesRefused(this.sim.now())) {
          answer = () => reject(new Error(`${op.name}: etcdserver: mvcc: database space exceeded (500)`))
        } else {
          try {
            const value = op.apply()
            answer = () => resolve(value)
          } catch (error) {
            if (error instanceof ConflictError) this.observer.conflicted?.(party.ref, op.name, sentAt)
            answer = () => reject(error instanceof Error ? error : new Error(String(error)))
          }
        }
        // Applied all the same (a write lands), and the answer is lost to a reset on the way back.
        if (outcome === 'unanswered') answer = () => reject(new Error(`${op.name}: connection reset by peer (after the request was sent)`))
        // The answer leaves after the processing time (later if a stall began meanwhile) and travels back.
        const leaves = this.faults.unstalledAt(this.sim.now() + latency)
        this.sim.at(leaves + NET_MS, () => {
          cancels.push(party.clock.run(() => finish(answer)))
        })
      })
    })
  }

  // ---- the operations ----

  getLease(party: Party, namespace: string, name: string, signal?: AbortSignal): Promise<Lease | undefined> {
    return this.request(party, {name: `get lease ${namespace}/${name}`, write: false, apply: () => copy(this.leases.get(`${namespace}/${name}`))}, signal)
  }

  createLease(party: Party, lease: Lease): Promise<Lease> {
    return this.request(party, {
      name: `create lease ${lease.namespace}/${lease.name}`,
      write: true,
      apply: () => {
        const key = `${lease.namespace}/${lease.name}`
        if (this.leases.has(key)) throw new AlreadyExistsError(`leases "${lease.name}" already exists`)
        return this.storeLease(lease, party.ref)
      },
    })
  }

  updateLease(party: Party, lease: Lease): Promise<Lease> {
    return this.request(party, {
      name: `update lease ${lease.namespace}/${lease.name}`,
      write: true,
      apply: () => {
        const current = this.leases.get(`${lease.namespace}/${lease.name}`)
        if (current === undefined) throw new NotFoundError(`leases "${lease.name}" not found`)
        if (lease.resourceVersion !== current.resourceVersion) throw new ConflictError(`Operation cannot be fulfilled on leases "${lease.name}": the object has been modified`)
        return this.storeLease(lease, party.ref)
      },
    })
  }

  private storeLease(lease: Lease, by: PartyRef): Lease {
    const stored: Lease = {name: lease.name, namespace: lease.namespace, resourceVersion: String(++this.revision), spec: {...lease.spec}}
    this.leases.set(`${lease.namespace}/${lease.name}`, stored)
    this.emit({resource: 'leases', type: 'upsert', object: stored}, by)
    return copy(stored)!
  }

  getPool(party: Party, name: string, signal?: AbortSignal): Promise<Pool | undefined> {
    return this.request(party, {name: `get pool ${name}`, write: false, apply: () => copy(this.pools.get(name))}, signal)
  }

  /** A read of everything a cache holds, at one resourceVersion. */
  list(party: Party, signal?: AbortSignal): Promise<{pools: Pool[]; leases: Lease[]; resourceVersion: number}> {
    return this.request(party, {name: 'list', write: false, apply: () => ({pools: [...this.pools.values()].map((p) => copy(p)!), leases: [...this.leases.values()].map((l) => copy(l)!), resourceVersion: this.revision})}, signal)
  }

  writeConditions(party: Party, name: string, resourceVersion: string, conditions: PoolCondition[], signal?: AbortSignal, poolIndex?: number): Promise<Pool> {
    const failure = party.ref.role === 'controller' && poolIndex !== undefined ? this.faults.writeFailure(poolIndex, this.sim.now()) : undefined
    return this.request(
      party,
      {
        name: `update pool ${name} status`,
        write: true,
        hang: failure === 'hang',
        extraMs: failure === 'error' ? 2_000 : 0,
        apply: () => {
          if (failure === 'reject') throw new RejectedError(`admission webhook denied the request: status.conditions is invalid`, 422)
          if (failure === 'error') throw new Error(`Internal error occurred: failed calling webhook: context deadline exceeded (500)`)
          const current = this.pools.get(name)
          if (current === undefined) throw new NotFoundError(`pools "${name}" not found`)
          if (current.metadata.resourceVersion !== resourceVersion) throw new ConflictError(`Operation cannot be fulfilled on pools "${name}": the object has been modified`)
          const written: Pool = {...current, metadata: {...current.metadata, resourceVersion: String(++this.revision)}, status: {...current.status, conditions: structuredClone(conditions)}}
          this.pools.set(name, written)
          this.emit({resource: 'pools', type: 'upsert', object: written}, party.ref)
          return copy(written)!
        },
      },
      signal,
    )
  }

  // ---- the ports, for one party ----

  leaseStore(party: Party, namespace: string): LeaseStore {
    return {
      get: (name) => this.getLease(party, namespace, name),
      create: (lease) => this.createLease(party, lease),
      update: (lease) => this.updateLease(party, lease),
    }
  }

  poolStore(party: Party, poolIndex: (name: string) => number | undefined): PoolStatusStore {
    return {
      get: (name, signal) => this.getPool(party, name, signal),
      writeConditions: (name, rv, conditions, signal) => this.writeConditions(party, name, rv, conditions, signal, poolIndex(name)),
    }
  }
}

function copy<T>(value: T | undefined): T | undefined {
  return value === undefined ? undefined : structuredClone(value)
}
