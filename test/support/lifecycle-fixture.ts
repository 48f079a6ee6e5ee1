/**
 * A controller lifecycle engine for one kind on a fake clock, with the in-memory pool store standing
 * in for the API server and its watch cache. Tests act as the poollet (put a pool, renew a Lease) and
 * as the watch (deliver what changed), and read writes, events, logs and metric reports from here.
 */
import type {MaxUnhealthy} from '../../src/core/lifecycle/mass-silence/max-unhealthy.ts'
import type {BreakerReport, MarkReport, PoolLifecycleOptions, UnmarkableReport} from '../../src/core/lifecycle/lifecycle-options.ts'
import {PoolLifecycle} from '../../src/core/lifecycle/pool-lifecycle.ts'
import {RequestLimiter} from '../../src/core/lifecycle/request-limiter.ts'
import {POOL_KINDS, READY_CONDITION, type PoolKind} from '../../src/core/pool-kinds.ts'
import type {EventSink, PoolEvent} from '../../src/core/ports.ts'
import type {ConditionStatus, Lease, Pool, PoolCondition} from '../../src/core/types.ts'
import {FakeClock} from './fake-clock.ts'
import {FakeLogger} from './fake-logger.ts'
import {FakePoolStatusStore} from './fake-stores.ts'

export const GRACE = 50_000

export class RecordingEvents implements EventSink {
  readonly events: PoolEvent[] = []
  record(event: PoolEvent): void {
    this.events.push(event)
  }
}

export interface FixtureOptions extends Partial<Omit<PoolLifecycleOptions, 'clock' | 'store' | 'events' | 'logger'>> {
  /** Start as leader with a whole view (default true); false leaves both off. */
  active?: boolean
  /** A limiter on the fixture's clock, for a test that shapes the queue. */
  makeLimiter?: (clock: FakeClock) => RequestLimiter
  maxUnhealthy?: MaxUnhealthy
}

export class LifecycleFixture {
  readonly clock = new FakeClock()
  readonly store = new FakePoolStatusStore()
  readonly logger = new FakeLogger()
  readonly events = new RecordingEvents()
  readonly marks: MarkReport[] = []
  readonly breakers: BreakerReport[] = []
  readonly unmarkable: UnmarkableReport[] = []
  /** Dry run: the pools it would have marked. */
  readonly wouldMarks: MarkReport[] = []
  /** The pools whose Unknown write failed, once per failure. */
  readonly writeFailures: string[] = []
  /** Pools as they fell silent (newly past their deadline), with the deadline. */
  readonly fellSilent: Array<{name: string; at: number}> = []
  /** The Leases as the watch cache holds them. */
  readonly leases = new Map<string, Lease>()
  /** The Leases as the API server holds them: what a confirming read returns. */
  readonly apiLeases = new Map<string, Lease>()
  readonly kind: PoolKind
  readonly engine: PoolLifecycle
  private readonly delivered = new Map<string, string | undefined>()

  constructor(options: FixtureOptions = {}) {
    const {active = true, makeLimiter, ...rest} = options
    this.kind = rest.kind ?? POOL_KINDS.machine
    this.engine = new PoolLifecycle({
      gracePeriodMs: GRACE,
      getPool: (name) => this.store.peek(name),
      getLease: (name) => this.leases.get(name),
      // The API's truth: what the watch delivered, plus renewals it has not (renewUnseen).
      confirmLease: (name) => Promise.resolve(this.apiLeases.get(name)),
      ...rest,
      ...(makeLimiter === undefined ? {} : {limiter: makeLimiter(this.clock)}),
      kind: this.kind,
      clock: this.clock,
      store: this.store,
      events: this.events,
      logger: this.logger,
      observer: {marked: (r) => this.marks.push(r), breaker: (r) => this.breakers.push(r), unmarkable: (r) => this.unmarkable.push(r), wouldMark: (r) => this.wouldMarks.push(r), fellSilent: (name, at) => this.fellSilent.push({name, at}), writeFailed: (name) => this.writeFailures.push(name)},
    })
    if (active) {
      this.engine.setLeader(true)
      this.engine.setViewWhole(true)
    }
  }

  /** Creates (or replaces) a pool as its poollet or an admin would, and delivers it. */
  putPool(name: string, options: {uid?: string; ready?: ConditionStatus; generation?: number; observedGeneration?: number; reason?: string; message?: string; extra?: PoolCondition[]} = {}): Pool {
    const {uid = `uid-${name}`, ready, generation = 1, observedGeneration = generation, reason = 'HeartbeatReceived', message = 'ok', extra = []} = options
    const conditions: PoolCondition[] = [...extra]
    if (ready !== undefined) conditions.push({type: READY_CONDITION, status: ready, reason, message, observedGeneration})
    const pool: Pool = {
      apiVersion: `${this.kind.group}/${this.kind.version}`,
      kind: this.kind.kind,
      metadata: {name, uid, generation},
      status: {state: 'Available', conditions},
    }
    const stored = this.store.put(pool)
    this.deliver(name)
    return stored
  }

  /** A Lease renewal as the poollet makes it, delivered through the watch. */
  renew(name: string, renewTime: string): void {
    const lease = this.renewUnseen(name, renewTime)
    this.leases.set(name, lease)
    this.engine.leaseUpserted(lease)
  }

  /** A renewal the API server holds but the watch has not delivered (a lagging or stalled watch). */
  renewUnseen(name: string, renewTime: string): Lease {
    const lease: Lease = {name, namespace: this.kind.leaseNamespace, spec: {holderIdentity: `${name}_x`, renewTime}}
    this.apiLeases.set(name, lease)
    return lease
  }

  deletePool(name: string): void {
    this.store.delete(name)
    this.delivered.delete(name)
    this.engine.poolDeleted(name)
  }

  /** The watch: delivers the pool if it changed since last delivered. */
  deliver(name: string): void {
    const pool = this.store.peek(name)
    if (pool === undefined || this.delivered.get(name) === pool.metadata.resourceVersion) return
    this.delivered.set(name, pool.metadata.resourceVersion)
    this.engine.poolUpserted(pool)
  }

  /** Moves time, then lets the watch deliver what the engine wrote meanwhile. */
  async advance(ms: number): Promise<void> {
    await this.clock.advance(ms)
    for (const name of [...this.delivered.keys()]) this.deliver(name)
    await this.clock.advance(0)
  }

  get writes(): number {
    return this.store.script.calls('writeConditions')
  }

  ready(name: string): PoolCondition | undefined {
    return this.store.peek(name)?.status?.conditions?.find((c) => c.type === READY_CONDITION)
  }
}

/** Renews the pools named every 5 s from now until `until` (ms on the fixture's clock). */
export async function renewUntil(fx: LifecycleFixture, names: readonly string[], until: number): Promise<void> {
  while (fx.clock.monotonic() < until) {
    await fx.advance(5_000)
    for (const name of names) fx.renew(name, `r${fx.clock.monotonic()}`)
  }
}

/**
 * The breaker tripped by a mass silence: five pools a to e, of which a, b and c fall silent while d and e
 * renew every fifth of a grace period, for two grace periods. On a fixture with `--max-unhealthy` 2
 * ({maxUnhealthy: {kind: 'count', count: 2}}) the three silent ones trip it, and nothing is marked.
 */
export async function tripBreaker(fx: LifecycleFixture): Promise<void> {
  for (const name of ['a', 'b', 'c', 'd', 'e']) fx.putPool(name, {ready: 'True'})
  for (let i = 1; i <= 10; i++) {
    await fx.advance(GRACE / 5)
    fx.renew('e', `r${i}`)
    fx.renew('d', `r${i}`)
  }
}

/**
 * The fixture's status writes held: each write's `land()` puts its conditions in the store (it landed),
 * and the test answers or fails it when it chooses (an answer lost, a write that hangs).
 */
export function heldWrites(fx: LifecycleFixture) {
  const held: {land: () => Pool; signal: AbortSignal | undefined; answer: (pool: Pool) => void; fail: (error: Error) => void}[] = []
  fx.store.writeConditions = (name: string, _rv: string, conditions: PoolCondition[], signal?: AbortSignal) =>
    new Promise<Pool>((resolve, reject) => {
      const land = () => {
        const pool = fx.store.peek(name)!
        return fx.store.put({...pool, status: {...pool.status, conditions}})
      }
      held.push({land, signal, answer: resolve, fail: reject})
    })
  return held
}

/** Pool p, Ready=True, falls due and its mark goes out and is held (heldWrites): the fixture and the held writes. */
export async function markOut(options: FixtureOptions = {}): Promise<{fx: LifecycleFixture; held: ReturnType<typeof heldWrites>}> {
  const fx = new LifecycleFixture(options)
  const held = heldWrites(fx)
  fx.putPool('p', {ready: 'True'})
  await fx.clock.advance(GRACE)
  return {fx, held}
}

/** Whether the engine's drain() had ended before `write` (held) landed and was answered, and after. */
export async function drainAround(fx: LifecycleFixture, write: ReturnType<typeof heldWrites>[number]): Promise<{before: boolean; after: boolean}> {
  let drained = false
  void fx.engine.drain().then(() => (drained = true))
  await fx.clock.advance(0)
  const before = drained
  write.answer(write.land())
  await fx.clock.advance(0)
  return {before, after: drained}
}

/**
 * A limiter of one slot that the test can hold: hold() (called while a request is in the slot) takes
 * the slot next, so the request queued after it waits its turn until release().
 */
export function gatedLimiter() {
  let limiter: RequestLimiter | undefined
  let open = () => {}
  return {
    makeLimiter: (clock: FakeClock) => (limiter = new RequestLimiter(clock, {qps: 1000, burst: 1000, concurrency: 1})),
    limiter: () => limiter!,
    hold: () => void limiter!.run(() => new Promise<void>((resolve) => (open = resolve)), {urgent: true}),
    release: () => open(),
  }
}
