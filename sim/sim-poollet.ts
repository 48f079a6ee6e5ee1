/**
 * One poollet as src/app/poollet.ts wires it: the real Heartbeat and LeaseRenewer, its requests
 * bounded by min(interval, Lease duration), on its own clock (so it can be paused) against the
 * simulated API. Its runtime always answers: a dead pool here is a dead poollet process. (The poollet
 * of production also watches its own pool; this one reads it each tick: more requests, same verdicts.)
 */
import {Heartbeat, defaultHolderIdentity, type TickResult} from '../src/core/index.ts'
import type {PoolKind} from '../src/core/pool-kinds.ts'
import type {Logger} from '../src/core/ports.ts'
import type {SimApi} from './sim-api.ts'
import {PartyClock, type SimClock} from './sim-clock.ts'

export interface SimPoolletOptions {
  sim: SimClock
  api: SimApi
  kind: PoolKind
  index: number
  poolName: string
  intervalMs: number
  leaseDurationMs: number
  random: () => number
  logger: Logger
  onTick?: (result: TickResult) => void
}

export class SimPoollet {
  readonly clock: PartyClock
  private readonly stop = new AbortController()

  constructor(o: SimPoolletOptions) {
    this.clock = new PartyClock(o.sim)
    const party = {ref: {role: 'poollet', index: o.index} as const, clock: this.clock, timeoutMs: Math.min(o.intervalMs, o.leaseDurationMs)}
    const heartbeat = new Heartbeat({
      kind: o.kind,
      poolName: o.poolName,
      holderIdentity: defaultHolderIdentity(o.poolName, `uuid-${o.index}`),
      probe: {probe: () => Promise.resolve()},
      leases: o.api.leaseStore(party, o.kind.leaseNamespace),
      pools: o.api.poolStore(party, () => undefined),
      clock: this.clock,
      logger: o.logger,
      intervalMs: o.intervalMs,
      leaseDurationMs: o.leaseDurationMs,
      random: o.random,
    })
    void heartbeat.run(this.stop.signal, o.onTick)
  }

  /** The process dies: nothing of it runs again, and no answer reaches it. */
  kill(): void {
    this.clock.kill()
    this.stop.abort()
  }
}
