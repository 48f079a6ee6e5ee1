/**
 * The controller's lifecycle engine alone (issue 4, figure 1): lease events per second per core and
 * bytes of memory per pool, at 10k and 100k pools. No I/O: an in-memory pool store, no-op logger and
 * events. Run with --expose-gc (the npm script does) so that heap figures are taken after a full GC.
 *
 * Clock: the real systemClock, as production wires it, so each event pays for its Date.now(). The
 * event loop is never yielded while measuring, so no timer fires and no pool falls due: the figure is
 * the cost of the path every healthy pool takes on every renewal (tracker update + one heap move).
 */
import {systemClock} from '../src/core/clock.ts'
import {PoolLifecycle} from '../src/core/lifecycle/pool-lifecycle.ts'
import {POOL_KINDS, READY_CONDITION} from '../src/core/pool-kinds.ts'
import type {Lease, Pool} from '../src/core/types.ts'
import {parseArgs, positiveInt} from './support/args.ts'
import {MemoryPools} from './support/memory-store.ts'
import {quietEvents, quietLogger} from './support/quiet.ts'
import {fmt, printTable} from './support/table.ts'

const flags = parseArgs({
  pools: {default: '10000,100000', help: 'comma-separated pool counts'},
  events: {default: '2000000', help: 'lease renewals fed per pool count, round-robin'},
})
const kind = POOL_KINDS.machine
const gc = (globalThis as {gc?: () => void}).gc
if (gc === undefined) throw new Error('run with node --expose-gc (npm run bench:engine does)')

function heapAfterGc(): number {
  // Two passes: the first may only schedule finalisation of what the second frees.
  gc!()
  gc!()
  return process.memoryUsage().heapUsed
}

function newPool(name: string): Pool {
  return {
    apiVersion: `${kind.group}/${kind.version}`,
    kind: kind.kind,
    metadata: {name, uid: `uid-${name}`, generation: 1, resourceVersion: '1'},
    status: {conditions: [{type: READY_CONDITION, status: 'True', reason: 'HeartbeatReceived', message: kind.readyMessage, observedGeneration: 1}]},
  }
}

function newEngine(store: MemoryPools): PoolLifecycle {
  const engine = new PoolLifecycle({kind, clock: systemClock, store, getPool: (n) => store.pools.get(n), confirmLease: () => Promise.resolve(undefined), events: quietEvents, logger: quietLogger})
  engine.setLeader(true)
  engine.setViewWhole(true)
  return engine
}

/** Feeds `count` renewals round-robin; each round carries a new renewTime, as a real renewal does. */
function feed(engine: PoolLifecycle, names: readonly string[], count: number, round0: number): void {
  const namespace = kind.leaseNamespace
  let round = round0
  let renewTime = microTime(round)
  for (let i = 0, j = 0; i < count; i++, j++) {
    if (j === names.length) {
      j = 0
      renewTime = microTime(++round)
    }
    // A fresh object per event, as the watch's decoder hands over one.
    const lease: Lease = {name: names[j]!, namespace, spec: {holderIdentity: 'x', renewTime}}
    engine.leaseUpserted(lease)
  }
}

function microTime(round: number): string {
  return `2026-01-01T00:00:${String(round % 60).padStart(2, '0')}.${String(round).padStart(6, '0')}Z`
}

function measure(n: number, events: number): string[] {
  const names = Array.from({length: n}, (_, i) => `pool-${i}`)
  const store = new MemoryPools()

  // Engine memory: records, heap slots and Map entries. The names are the cache's strings (shared,
  // not counted); the pool objects are dropped afterwards, so only what the engine keeps remains.
  const base = heapAfterGc()
  const engine = newEngine(store)
  for (const name of names) engine.poolUpserted(newPool(name))
  feed(engine, names, n, 0) // every record now holds a renewTime, as in steady state
  const engineBytes = (heapAfterGc() - base) / n

  // The same plus the pools held in a Map, as the watch cache holds them (decoded JSON, not counted
  // above): a lower bound for the controller's memory per pool before client-node's own overhead.
  for (const name of names) store.pools.set(name, newPool(name))
  const withPoolsBytes = (heapAfterGc() - base) / n

  feed(engine, names, Math.min(events, 5 * n), 1) // warm-up: let the JIT settle on the hot path
  const rounds0 = 1 + Math.ceil(Math.min(events, 5 * n) / n)
  const cpu0 = process.cpuUsage()
  const wall0 = performance.now()
  feed(engine, names, events, rounds0 + 1)
  const wallMs = performance.now() - wall0
  const cpu = process.cpuUsage(cpu0)
  const cpuMs = (cpu.user + cpu.system) / 1000
  if (engine.trackedPools !== n) throw new Error(`engine tracks ${engine.trackedPools} pools, want ${n}`)
  void engine.close()
  return [fmt(n), fmt(events), fmt(wallMs), fmt(cpuMs), fmt(events / (cpuMs / 1000)), fmt((cpuMs * 1e6) / events, 0), fmt(engineBytes), fmt(withPoolsBytes)]
}

const counts = flags.pools.split(',').map((v) => positiveInt('pools', v))
const events = positiveInt('events', flags.events)
const rows = [['pools', 'lease events', 'wall ms', 'cpu ms', 'events/s per core', 'ns/event', 'engine B/pool', 'engine+pools B/pool']]
for (const n of counts) rows.push(measure(n, events))
printTable(`PoolLifecycle alone (${process.version}, systemClock, grace 50s, no deadline due while measuring)`, rows)
