/**
 * The review's model of issue 18, as a simulation on the fake clock: live and dead pools renewing
 * their Leases every 10 s at their own phase, a watch that delivers at once, and an API whose probe
 * and confirming reads each fail at random with probability f (seeded). At deathAt the dead pools stop
 * renewing; the run ends when every dead pool is Ready=Unknown, or at the time limit. It counts the
 * marks of live pools (false Unknowns).
 *
 * The engine under test is wired by the caller (bench/verdicts-model.ts wires it as
 * src/app/kind-controller.ts does), so the same simulation measures any wiring.
 */
import {POOL_KINDS, READY_CONDITION} from '../../src/core/pool-kinds.ts'
import type {Clock} from '../../src/core/clock.ts'
import type {Lease, Pool, PoolCondition} from '../../src/core/types.ts'
import type {PoolStatusStore} from '../../src/core/ports.ts'
import {FakeClock} from '../../test/support/fake-clock.ts'
import {seededRandom} from '../../test/support/seeded-random.ts'

export const KIND = POOL_KINDS.machine
export const GRACE_MS = 50_000
const RENEW_MS = 10_000
/** Every request of the model answers after this long (loopback, a few ms). */
const LATENCY_MS = 2
const STEP_MS = 100

/** What a wiring needs from the simulation, and gives back. */
export interface ModelApi {
  clock: Clock
  store: PoolStatusStore
  getPool: (name: string) => Pool | undefined
  getLease: (name: string) => Lease | undefined
  /** The API probe: fails with probability f. */
  probe: (signal: AbortSignal) => Promise<void>
  /** A confirming read: fails with probability f. */
  confirmLease: (name: string, signal: AbortSignal) => Promise<Lease | undefined>
}

export interface ModelEngine {
  poolUpserted(pool: Pool): void
  leaseUpserted(lease: Lease): void
  /** Blind spells begun so far (any reason). */
  spells(): number
  stop(): void
}

export interface ModelRun {
  dead: number
  live: number
  failureRate: number
  seed: number
  /** From the death to the last dead pool's mark, ms; undefined if some were never marked. */
  allMarkedMs: number | undefined
  marked: number
  falseUnknowns: number
  spells: number
  requests: number
  simulatedMs: number
}

class ModelStore implements PoolStatusStore {
  readonly pools = new Map<string, Pool>()
  private revision = 0
  writes = 0
  private readonly clock: FakeClock
  constructor(clock: FakeClock) {
    this.clock = clock
  }

  get(name: string): Promise<Pool | undefined> {
    return later(this.clock, () => this.pools.get(name))
  }

  writeConditions(name: string, _rv: string, conditions: PoolCondition[]): Promise<Pool> {
    this.writes++
    return later(this.clock, () => {
      const pool = this.pools.get(name)
      if (pool === undefined) throw new Error(`pool ${name} not found`)
      const written: Pool = {...pool, metadata: {...pool.metadata, resourceVersion: String(++this.revision)}, status: {...pool.status, conditions}}
      this.pools.set(name, written)
      return written
    })
  }

  put(pool: Pool): void {
    this.pools.set(pool.metadata.name, {...pool, metadata: {...pool.metadata, resourceVersion: String(++this.revision)}})
  }
}

function later<T>(clock: FakeClock, answer: () => T): Promise<T> {
  return new Promise((resolve, reject) =>
    clock.setTimer(LATENCY_MS, () => {
      try {
        resolve(answer())
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)))
      }
    }),
  )
}

export async function runModel(
  options: {dead: number; live: number; failureRate: number; seed: number; maxMs: number; deathAt?: number},
  wire: (api: ModelApi) => ModelEngine,
): Promise<ModelRun> {
  const {dead, live, failureRate, seed, maxMs} = options
  const deathAt = options.deathAt ?? 60_000
  const clock = new FakeClock()
  const random = seededRandom(seed)
  const store = new ModelStore(clock)
  const leases = new Map<string, Lease>()
  let requests = 0
  const lossy = <T>(answer: () => T): Promise<T> => {
    requests++
    const fails = random() < failureRate
    return later(clock, () => {
      if (fails) throw new Error('the request was spoilt')
      return answer()
    })
  }
  const api: ModelApi = {
    clock,
    store,
    getPool: (name) => store.pools.get(name),
    getLease: (name) => leases.get(name),
    probe: () => lossy(() => undefined),
    confirmLease: (name) => lossy(() => leases.get(name)),
  }
  const names = Array.from({length: dead + live}, (_, i) => `pool-${i}`)
  const isDead = (i: number) => i < dead
  // Each pool renews at its own phase within the interval.
  const slotsPerStep = RENEW_MS / STEP_MS
  const bySlot: number[][] = Array.from({length: slotsPerStep}, () => [])
  for (let i = 0; i < names.length; i++) bySlot[Math.floor(random() * slotsPerStep)]!.push(i)
  for (const name of names) {
    const ready: PoolCondition = {type: READY_CONDITION, status: 'True', reason: 'HeartbeatReceived', message: KIND.readyMessage, observedGeneration: 1}
    store.put({apiVersion: `${KIND.group}/${KIND.version}`, kind: KIND.kind, metadata: {name, uid: `uid-${name}`, generation: 1}, status: {conditions: [ready]}})
    leases.set(name, {name, namespace: KIND.leaseNamespace, spec: {holderIdentity: `${name}_x`, renewTime: 'start'}})
  }
  const engine = wire(api)
  const delivered = new Map<string, string | undefined>()
  const deliver = () => {
    for (const name of names) {
      const pool = store.pools.get(name)!
      if (delivered.get(name) === pool.metadata.resourceVersion) continue
      delivered.set(name, pool.metadata.resourceVersion)
      engine.poolUpserted(pool)
    }
  }
  for (const lease of leases.values()) engine.leaseUpserted(lease)
  deliver()
  const markedAt = new Map<string, number>()
  let falseUnknowns = 0
  const unknown = (name: string) => store.pools.get(name)?.status?.conditions?.find((c) => c.type === READY_CONDITION)?.status === 'Unknown'
  let deadMarked = 0
  for (let step = 1; ; step++) {
    await clock.advance(STEP_MS)
    const now = clock.monotonic()
    for (const i of bySlot[step % slotsPerStep]!) {
      if (isDead(i) && now > deathAt) continue
      const lease: Lease = {name: names[i]!, namespace: KIND.leaseNamespace, spec: {holderIdentity: `${names[i]}_x`, renewTime: String(now)}}
      leases.set(lease.name, lease)
      engine.leaseUpserted(lease)
    }
    deliver()
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!
      if (markedAt.has(name) || !unknown(name)) continue
      markedAt.set(name, now)
      if (isDead(i)) deadMarked++
      else falseUnknowns++
    }
    if ((now > deathAt && deadMarked === dead) || now >= maxMs) {
      engine.stop()
      const last = Math.max(...names.slice(0, dead).map((n) => markedAt.get(n) ?? Number.POSITIVE_INFINITY))
      return {
        dead,
        live,
        failureRate,
        seed,
        allMarkedMs: Number.isFinite(last) ? last - deathAt : undefined,
        marked: deadMarked,
        falseUnknowns,
        spells: engine.spells(),
        requests,
        simulatedMs: now,
      }
    }
  }
}
