/**
 * A seed's scenario: how many pools and replicas, which pools die and when (singly or en masse), and
 * the faults, drawn from the fault classes with their lengths, periods and rates. Everything follows
 * from the seed alone, so `npm run sim -- --seed=N` replays a run exactly.
 */
import {seededRandom} from '../test/support/seeded-random.ts'
import type {Fault, FaultClass} from './faults.ts'

export const FAULT_CLASSES = [
  'stall',
  'refuse-writes',
  'slow',
  'loss',
  'watch-gap',
  'watch-lag',
  'watch-silence',
  'controller-pause',
  'controller-restart',
  'poollet-pause',
  'write-fail',
] as const satisfies readonly FaultClass[]

export interface Scenario {
  seed: number
  pools: number
  replicas: number
  durationMs: number
  /** The classes drawn for this seed (the table's rows). */
  classes: FaultClass[]
  faults: Fault[]
  deaths: {pool: number; at: number}[]
  /** Pools deleted and created again (a new uid) while their poollets run on. */
  recreations: {pool: number; at: number; gapMs: number}[]
}

export interface ScenarioOptions {
  /** Only this class of faults (besides deaths). */
  only?: FaultClass
  durationMs?: number
  /** Never draw a region's worth of pools (the suite's sweep, for speed). */
  smallOnly?: boolean
}

const S = 1_000

export function drawScenario(seed: number, options: ScenarioOptions = {}): Scenario {
  const random = seededRandom(seed * 7919 + 13)
  const between = (lo: number, hi: number) => lo + random() * (hi - lo)
  const int = (lo: number, hi: number) => Math.floor(between(lo, hi + 1))
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
  const durationMs = options.durationMs ?? 15 * 60 * S
  // One seed in twenty is a region's worth: more pools than the request limiter lets out at once.
  const large = random() < 0.05 && options.smallOnly !== true
  const pools = large ? int(250, 1200) : int(8, 30)
  const replicas = pick([1, 1, 1, 2, 2, 3])
  // Faults begin after every pool has been seen for a grace period, and end with room for the bound.
  const from = 90 * S
  const to = durationMs - 240 * S
  const when = (length: number) => Math.round(between(from, Math.max(from, to - length)))
  const classes: FaultClass[] = options.only !== undefined ? [options.only] : [...new Set([pick(FAULT_CLASSES), ...(random() < 0.4 ? [pick(FAULT_CLASSES)] : [])])]
  const faults: Fault[] = []
  const replica = () => int(0, replicas - 1)
  const pool = () => int(0, pools - 1)
  for (const cls of classes) {
    const count = int(1, 3)
    for (let n = 0; n < count; n++) {
      switch (cls) {
        case 'stall': {
          if (random() < 0.5) {
            const length = Math.round(between(1, 40) * S)
            const start = when(length)
            faults.push({class: 'stall', start, end: start + length})
          } else {
            // Repeated stalls, each shorter than what three failed probes take: the review's first row.
            const length = Math.round(between(5, 16) * S)
            const period = Math.round(between(length / S + 4, 75) * S)
            const window = Math.round(between(2, 8) * 60 * S)
            const start = when(window)
            for (let t = start; t < start + window; t += period) faults.push({class: 'stall', start: t, end: t + length})
          }
          break
        }
        case 'refuse-writes': {
          const length = Math.round(between(10, 180) * S)
          const start = when(length)
          faults.push({class: 'refuse-writes', start, end: start + length})
          break
        }
        case 'slow': {
          const length = Math.round(between(60, 300) * S)
          const start = when(length)
          faults.push({class: 'slow', start, end: start + length, latencyMs: Math.round(pick([100, 300, 1_000, 2_000, 4_500]) * between(0.8, 1.2))})
          break
        }
        case 'loss': {
          const target = pick(['poollets', 'controllers', 'one-poollet', 'one-controller'] as const)
          const length = Math.round(between(60, 600) * S)
          const start = when(length)
          if (target === 'poollets') faults.push({class: 'loss', start, end: start + length, target, rate: pick([0.05, 0.1, 0.2, 0.3])})
          else if (target === 'controllers') faults.push({class: 'loss', start, end: start + length, target, rate: pick([0.02, 0.05, 0.1])})
          else if (target === 'one-poollet') {
            // A poollet cut off from the API (its node's link): a correct mark once the grace has passed.
            const cut = Math.round(between(10, 120) * S)
            faults.push({class: 'loss', start, end: start + cut, target: {role: 'poollet', index: pool()}, rate: random() < 0.5 ? 1 : 0.5})
          } else {
            const cut = Math.round(between(5, 60) * S)
            faults.push({class: 'loss', start, end: start + cut, target: {role: 'controller', index: replica()}, rate: random() < 0.5 ? 1 : 0.3})
          }
          break
        }
        case 'watch-gap': {
          const length = Math.round(between(1, 60) * S)
          const start = when(length)
          faults.push({class: 'watch-gap', start, end: start + length, replica: replica(), resource: pick(['pools', 'leases'] as const), relist: random() < 0.5})
          break
        }
        case 'watch-lag': {
          const length = Math.round(between(60, 300) * S)
          const start = when(length)
          faults.push({class: 'watch-lag', start, end: start + length, replica: replica(), lagMs: Math.round(between(1, 40) * S)})
          break
        }
        case 'watch-silence': {
          const length = Math.round(between(5, 180) * S)
          const start = when(length)
          faults.push({class: 'watch-silence', start, end: start + length, replica: replica(), resource: pick(['pools', 'leases'] as const)})
          break
        }
        case 'controller-pause': {
          const length = Math.round(between(1, 30) * S)
          const start = when(length)
          faults.push({class: 'controller-pause', start, end: start + length, replica: replica()})
          break
        }
        case 'controller-restart': {
          const length = Math.round(between(1, 60) * S)
          const start = when(length)
          faults.push({class: 'controller-restart', start, end: start + length, replica: replica()})
          break
        }
        case 'poollet-pause': {
          const length = Math.round(between(1, 90) * S)
          const start = when(length)
          faults.push({class: 'poollet-pause', start, end: start + length, pool: pool()})
          break
        }
        case 'write-fail': {
          const length = Math.round(between(60, 600) * S)
          const start = when(length)
          const how = pick(['reject', 'error', 'hang'] as const)
          for (let k = int(1, 5); k > 0; k--) faults.push({class: 'write-fail', start, end: start + length, pool: pool(), how})
          break
        }
      }
    }
  }
  const deaths: Scenario['deaths'] = []
  const dead = new Set<number>()
  const kill = (at: number, i: number) => {
    if (dead.has(i)) return
    dead.add(i)
    deaths.push({pool: i, at: Math.round(at)})
  }
  if (large || random() < 0.3) {
    // En masse: a rack, a zone.
    const at = between(60 * S, to)
    for (let k = Math.round(pools * (large ? between(0.5, 0.9) : between(0.3, 0.7))); k > 0; k--) kill(at, pool())
    // A blind spell just as their marks are confirmed and written (the review's fourth row).
    if (random() < 0.5) {
      const start = Math.round(at + 50 * S + between(0, 3) * S)
      const length = Math.round(between(1, 8) * S)
      const r = replica()
      faults.push(
        pick<Fault>([
          {class: 'watch-gap', start, end: start + length, replica: r, resource: 'leases', relist: false},
          {class: 'stall', start, end: start + length},
          {class: 'controller-pause', start, end: start + length, replica: r},
          {class: 'loss', start, end: start + length, target: 'controllers', rate: 0.5},
        ]),
      )
    }
  }
  for (let k = int(1, 4); k > 0; k--) kill(between(60 * S, to), pool())
  // A pool whose writes fail dies while they do: the review's fifth row.
  for (const f of faults) if (f.class === 'write-fail' && random() < 0.5) kill(between(f.start, f.end), f.pool)
  const recreations: Scenario['recreations'] = []
  if (random() < 0.2) {
    const i = pool()
    if (!dead.has(i)) recreations.push({pool: i, at: Math.round(between(from, to)), gapMs: Math.round(between(0, 30) * S)})
  }
  return {seed, pools, replicas, durationMs, classes, faults, deaths: deaths.sort((a, b) => a.at - b.at), recreations}
}
