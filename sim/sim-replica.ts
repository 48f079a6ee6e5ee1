/**
 * One controller replica as src/app/controller.ts and kind-controller.ts wire it: the real Sight
 * (probing with a one-item list of the lease namespace), one RequestLimiter, kindEngine with the pool
 * and Lease caches, the confirming read and the Unknown write bounded as in production, and, with
 * several replicas, the real LeaderElector. As the manager does, the engine leads only once both caches
 * are whole (and, electing, its evidence a grace period old); losing leadership ends the process (its writes finish and settle first), and the kubelet
 * starts it again a second later, with nothing remembered.
 */
import {
  DEFAULT_REQUEST_LIMITS,
  LeaderElector,
  RequestLimiter,
  Sight,
  WRITE_PROBE_DEFAULTS,
  kindEngine,
  sightTimings,
  writeProbe,
  type KindEngine,
  type Lease,
  type Logger,
  type Pool,
  type PoolEvent,
} from '../src/core/index.ts'
import type {PoolKind} from '../src/core/pool-kinds.ts'
import {watchGapToleranceMs} from '../src/app/kind-controller.ts'
import type {Fault, FaultTimeline} from './faults.ts'
import type {Party, SimApi} from './sim-api.ts'
import {SimCache} from './sim-cache.ts'
import {PartyClock, type SimClock} from './sim-clock.ts'

/** As kind-controller.ts: the deadline of an Unknown write. */
const UNKNOWN_WRITE_TIMEOUT_MS = 5_000
export const LEADER_NAMESPACE = 'ironpool-system'

export interface ReplicaHooks {
  event(replica: number, event: PoolEvent): void
  marked(replica: number, pool: string): void
  leading(replica: number, leading: boolean): void
}

export interface SimReplicaOptions {
  sim: SimClock
  api: SimApi
  kind: PoolKind
  index: number
  gracePeriodMs: number
  leaderElection: boolean
  faults: readonly Fault[]
  timeline: FaultTimeline
  poolIndex: (name: string) => number | undefined
  random: () => number
  logger: Logger
  hooks: ReplicaHooks
  /** The sight's write probe, as the controller wires it (off: the wiring before it existed). */
  writeProbe: boolean
}

/** One life of the replica's process. */
class ReplicaProcess {
  readonly clock: PartyClock
  readonly engine: KindEngine
  private readonly stop = new AbortController()
  private readonly caches: SimCache[]
  leading = false

  constructor(o: SimReplicaOptions, onLost: () => void) {
    const {sim, api, kind, index, gracePeriodMs, logger} = o
    this.clock = new PartyClock(sim)
    const clock = this.clock
    const party = (timeoutMs: number): Party => ({ref: {role: 'controller', index}, clock, timeoutMs})
    const timings = sightTimings(gracePeriodMs)
    const probeParty = party(timings.probeTimeoutMs)
    const identity = `replica-${index}-${Math.floor(o.random() * 1e9)}`
    const sight = new Sight({
      clock,
      logger,
      probe: (signal) => api.getLease(probeParty, kind.leaseNamespace, '', signal).then(() => undefined),
      ...timings,
      ...(o.writeProbe ? {writeProbe: writeProbe({leases: api.leaseStore(party(timings.writeProbeTimeoutMs ?? WRITE_PROBE_DEFAULTS.timeoutMs), LEADER_NAMESPACE), namespace: LEADER_NAMESPACE, holderIdentity: identity, clock})} : {}),
    })
    const caches: Record<'pools' | 'leases', SimCache> = {} as never
    const engine = kindEngine({
      kind,
      clock,
      sight,
      caches: ['pools', 'leases'],
      limiter: new RequestLimiter(clock, DEFAULT_REQUEST_LIMITS),
      store: api.poolStore(party(UNKNOWN_WRITE_TIMEOUT_MS), o.poolIndex),
      getPool: (name) => caches.pools.get(name) as Pool | undefined,
      getLease: (name) => caches.leases.get(name) as Lease | undefined,
      confirmLease: (name, signal) => api.getLease(probeParty, kind.leaseNamespace, name, signal),
      listLeases: (signal) => api.list(probeParty, signal).then((list) => list.leases.filter((l) => l.namespace === kind.leaseNamespace)),
      confirmTimeoutMs: timings.probeTimeoutMs,
      events: {record: (event) => o.hooks.event(index, event)},
      logger,
      gracePeriodMs,
      observer: {
        confirmRead: (_name, outcome) => {
          if (outcome === 'renewed') caches.leases.requestRelist('a confirming read found a renewal the watch had not delivered')
        },
        marked: (report) => o.hooks.marked(index, report.name),
      },
    })
    this.engine = engine
    const gapToleranceMs = watchGapToleranceMs(gracePeriodMs)
    const lagOf = () => o.timeline.watchLagMs(index, sim.now())
    for (const resource of ['pools', 'leases'] as const) {
      caches[resource] = new SimCache({
        resource,
        api,
        sim,
        party: party(timings.probeTimeoutMs * 2),
        gapToleranceMs,
        faults: o.faults,
        replica: index,
        sink: {
          state: (reason, detail, relisted) => engine.cacheState(resource, reason, detail, relisted),
          upsert: (object) => (resource === 'pools' ? engine.lifecycle.poolUpserted(object as Pool) : engine.lifecycle.leaseUpserted(object as Lease)),
          delete: (name) => (resource === 'pools' ? engine.lifecycle.poolDeleted(name) : engine.lifecycle.leaseDeleted(name)),
        },
      })
    }
    this.caches = [caches.pools, caches.leases]
    void sight.run(this.stop.signal)
    for (const cache of this.caches) cache.start(lagOf)

    const lead = (leading: boolean) => {
      this.leading = leading
      engine.lifecycle.setLeader(leading)
      o.hooks.leading(index, leading)
    }
    // The manager: caches first, then leader election (or leading at once without it).
    const startElection = () => {
      if (!o.leaderElection) {
        lead(true)
        return
      }
      const elector = new LeaderElector({
        store: api.leaseStore(party(5_000), LEADER_NAMESPACE),
        clock,
        logger,
        identity,
        name: 'ironpool-controller',
        namespace: LEADER_NAMESPACE,
        releaseOnCancel: true,
        random: o.random,
        onStartedLeading: (leaderSignal) => {
          lead(true)
          leaderSignal.addEventListener('abort', () => lead(false), {once: true})
        },
      })
      void elector.run(this.stop.signal).then(async (result) => {
        if (result !== 'lost') return
        // As the manager: the writes in flight end on their era's signal and are awaited, and the
        // replica is a standby again, caches and evidence kept; it campaigns anew once warmed up.
        onLost()
        lead(false)
        await engine.lifecycle.drain()
        if (!this.stop.signal.aborted) warmedUp()
      })
    }
    // As the controller's wiring: with leader election, a replica campaigns only once its own
    // evidence is a grace period old ('evidence warm-up' in src/app/controller.ts).
    const warmedUp = () => {
      if (engine.lifecycle.evidenceAgeMs() >= gracePeriodMs) startElection()
      else clock.setTimer(timings.tickMs, warmedUp)
    }
    let unsynced = this.caches.length
    for (const cache of this.caches) {
      cache.onceSynced(() => {
        if (--unsynced > 0) return
        if (o.leaderElection) warmedUp()
        else startElection()
      })
    }
  }

  /** The process ends (killed, or exiting): nothing of it runs again. */
  exit(): void {
    this.stop.abort()
    for (const cache of this.caches) cache.stop()
    this.clock.kill()
  }
}

export class SimReplica {
  private readonly o: SimReplicaOptions
  process: ReplicaProcess | undefined
  /** Starts after the first: the schedule's restarts (a replica that loses leadership does not exit). */
  restarts = 0
  /** Leaderships lost (each a return to standby). */
  losses = 0
  private started = false

  constructor(o: SimReplicaOptions) {
    this.o = o
    for (const f of o.faults) {
      if (f.class === 'controller-pause' && f.replica === o.index) o.sim.at(f.start, () => this.process?.clock.pause(f.end))
      if (f.class === 'controller-restart' && f.replica === o.index) {
        o.sim.at(f.start, () => this.kill())
        o.sim.at(f.end, () => this.start())
      }
    }
  }

  start(): void {
    if (this.process !== undefined) return
    if (this.started) this.restarts++
    this.started = true
    this.process = new ReplicaProcess(this.o, () => this.losses++)
  }

  kill(): void {
    const p = this.process
    if (p === undefined) return
    this.process = undefined
    if (p.leading) this.o.hooks.leading(this.o.index, false)
    p.exit()
  }

  /** The engine, when this replica's process is running and leads. */
  get leader(): KindEngine | undefined {
    return this.process?.leading ? this.process.engine : undefined
  }
}
