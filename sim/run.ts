/**
 * One seed, start to end: the scenario drawn from it, the simulated API, a poollet per pool, the
 * controller replicas, the oracle hearing everything, and the invariants checked after every instant.
 */
import {POOL_KINDS, READY_CONDITION} from '../src/core/pool-kinds.ts'
import type {Logger} from '../src/core/ports.ts'
import {seededRandom} from '../test/support/seeded-random.ts'
import {FaultTimeline, type FaultClass} from './faults.ts'
import {Oracle, type DeadPool, type FalseUnknown, type Stranded} from './oracle.ts'
import {drawScenario, type Scenario, type ScenarioOptions} from './schedule.ts'
import {SimApi} from './sim-api.ts'
import {SimClock} from './sim-clock.ts'
import {SimPoollet} from './sim-poollet.ts'
import {SimReplica} from './sim-replica.ts'

export const KIND = POOL_KINDS.machine
/** The production defaults: grace 50 s, heartbeat 10 s, Lease 40 s. */
export const SIM_TIMINGS = {gracePeriodMs: 50_000, heartbeatMs: 10_000, leaseDurationMs: 40_000}

export interface SimResult {
  seed: number
  classes: FaultClass[]
  pools: number
  replicas: number
  falseUnknowns: FalseUnknown[]
  /** Dead pools not marked by their bound (bound within the run). */
  late: DeadPool[]
  dead: DeadPool[]
  stranded: Stranded[]
  misreported: ReturnType<Oracle['misreported']>
  marks: number
  restarts: number
  /** Leaderships lost, over all replicas. */
  losses: number
  requests: number
  simulatedMs: number
}

export interface RunOptions extends ScenarioOptions {
  /** Where a trace goes, line by line: every log line of every party, the faults and the verdicts. */
  trace?: (line: string) => void
  scenario?: Scenario
  /** Wire the sight's write probe (default true). */
  writeProbe?: boolean
  /** Hears every request sent, by whom and when (simulated ms): for benches of the request rate. */
  onSent?: (by: {role: 'poollet' | 'controller'; index: number}, op: string, at: number) => void
}

const quiet: Logger = {debug() {}, info() {}, warn() {}, error() {}}

export const poolName = (i: number) => `pool-${String(i).padStart(2, '0')}`

export async function runSeed(seed: number, options: RunOptions = {}): Promise<SimResult> {
  const scenario = options.scenario ?? drawScenario(seed, options)
  const {gracePeriodMs, heartbeatMs, leaseDurationMs} = SIM_TIMINGS
  const sim = new SimClock()
  const random = seededRandom(seed)
  const timeline = new FaultTimeline(scenario.faults)
  const api = new SimApi(sim, timeline, random)
  const indexOf = new Map<string, number>()
  for (let i = 0; i < scenario.pools; i++) indexOf.set(poolName(i), i)
  const poolIndex = (name: string) => indexOf.get(name)
  const oracle = new Oracle(scenario, gracePeriodMs, poolIndex, poolName)
  const trace = options.trace
  const stamp = () => `${(sim.now() / 1000).toFixed(3).padStart(9)}s`
  const logger = (who: string): Logger => {
    if (trace === undefined) return quiet
    const line = (level: string) => (obj: object, msg: string) => trace(`${stamp()} ${who} ${level} ${msg} ${JSON.stringify(obj)}`)
    return {debug: () => {}, info: line('info'), warn: line('warn'), error: line('error')}
  }
  let requests = 0
  api.observer = {
    committed: (event, by, at) => {
      oracle.committed(event, by, at)
      if (trace !== undefined && event.resource === 'pools') {
        const ready = (event.object).status?.conditions?.find((c) => c.type === READY_CONDITION)?.status
        trace(`${stamp()} api ${event.type} ${event.object.metadata.name} Ready=${ready} by ${by.role}-${by.index}`)
      }
    },
    sent: (by, op, at, outcome) => {
      requests++
      options.onSent?.(by, op, at)
      oracle.requestSent(by, op, at, outcome)
    },
    conflicted: (by, op, at) => oracle.requestConflicted(by, op, at),
  }
  const harness = {role: 'controller', index: -1} as const
  const ready = {type: READY_CONDITION, status: 'True' as const, reason: 'HeartbeatReceived', message: KIND.readyMessage, observedGeneration: 1}
  const createPool = (i: number, generation: number) =>
    api.putPool({apiVersion: `${KIND.group}/${KIND.version}`, kind: KIND.kind, metadata: {name: poolName(i), uid: `uid-${i}-${generation}`, generation: 1}, status: {conditions: [ready]}}, harness)
  for (let i = 0; i < scenario.pools; i++) createPool(i, 0)

  const poollets: (SimPoollet | undefined)[] = []
  for (let i = 0; i < scenario.pools; i++) {
    // Each poollet starts at its own phase of the interval.
    sim.at(Math.floor(random() * heartbeatMs), () => {
      const p = new SimPoollet({sim, api, kind: KIND, index: i, poolName: poolName(i), intervalMs: heartbeatMs, leaseDurationMs, random, logger: logger(`poollet-${i}`)})
      poollets[i] = p
      for (const f of scenario.faults) if (f.class === 'poollet-pause' && f.pool === i) sim.at(f.start, () => p.clock.pause(f.end))
    })
  }
  for (const d of scenario.deaths) {
    sim.at(d.at, () => {
      poollets[d.pool]?.kill()
      oracle.died(d.pool, d.at)
      trace?.(`${stamp()} truth poollet-${d.pool} killed`)
    })
  }
  for (const r of scenario.recreations) {
    sim.at(r.at, () => api.deletePool(poolName(r.pool), harness))
    sim.at(r.at + r.gapMs, () => createPool(r.pool, 1))
  }
  for (const f of scenario.faults) {
    sim.at(f.start, () => trace?.(`${stamp()} fault begins ${JSON.stringify(f)}`))
    sim.at(f.end, () => trace?.(`${stamp()} fault ends ${f.class}`))
  }

  const replicas: SimReplica[] = []
  for (let r = 0; r < scenario.replicas; r++) {
    const replica = new SimReplica({
      sim,
      api,
      kind: KIND,
      index: r,
      gracePeriodMs,
      leaderElection: scenario.replicas > 1,
      faults: scenario.faults,
      timeline,
      poolIndex,
      random,
      logger: logger(`replica-${r}`),
      writeProbe: options.writeProbe ?? true,
      hooks: {
        event: (_replica, event) => {
          if (event.reason === KIND.unknownReason) oracle.markEvented(event.name)
        },
        marked: (_replica, pool) => oracle.markReported(pool),
        leading: (replica, leading) => trace?.(`${stamp()} replica-${replica} ${leading ? 'leads' : 'stops leading'}`),
      },
    })
    replicas.push(replica)
    replica.start()
  }

  // After every instant; with hundreds of pools, once a simulated second (the check is O(pools)).
  const checkEveryMs = scenario.pools > 100 ? 1_000 : 0
  let checkedAt = -Infinity
  await sim.runUntil(scenario.durationMs, () => {
    if (sim.now() - checkedAt < checkEveryMs) return
    checkedAt = sim.now()
    for (let r = 0; r < replicas.length; r++) {
      const engine = replicas[r]!.leader
      if (engine === undefined) continue
      const stranded = engine.lifecycle.strandedPools()
      if (stranded.length > 0) {
        oracle.strandedAt(stranded, sim.now(), r)
        trace?.(`${stamp()} INVARIANT I: stranded ${stranded.join(', ')} on replica-${r}`)
      }
    }
  })
  for (const r of replicas) r.kill()
  for (const p of poollets) p?.kill()
  return {
    seed,
    classes: scenario.classes,
    pools: scenario.pools,
    replicas: scenario.replicas,
    falseUnknowns: oracle.falseUnknowns,
    late: oracle.late(scenario.durationMs),
    dead: oracle.dead,
    stranded: oracle.stranded,
    misreported: oracle.misreported(),
    marks: oracle.marks,
    restarts: replicas.reduce((n, r) => n + r.restarts, 0),
    losses: replicas.reduce((n, r) => n + r.losses, 0),
    requests,
    simulatedMs: scenario.durationMs,
  }
}

/** Whether a run kept every promise and invariant. */
export function clean(r: SimResult): boolean {
  return r.falseUnknowns.length === 0 && r.late.length === 0 && r.stranded.length === 0 && r.misreported.length === 0
}
