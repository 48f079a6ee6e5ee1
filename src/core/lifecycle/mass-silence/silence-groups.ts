/**
 * Correlated silence, named: when several pools of a kind fall silent within one window (a lease
 * duration, the breaker's window), what do they share? Pools are grouped by what their objects say:
 * a topology label (the first of the zone labels a pool carries: IronCore's draft IEP-24
 * `topology.ironcore.dev/zone`, then Kubernetes' `topology.kubernetes.io/zone`), the host their
 * Lease's holder names (`<host>/...` or `<host>_<uuid>` other than the pool's own `<pool>_<uuid>`),
 * and the kind as a whole. A group with at least `minPools` pools silent within the window is reported
 * once per spell, `settleMs` after it reached that many (a partition's deadlines spread over a
 * heartbeat interval: the report then counts the rest too), with one log line, one Event, one metric
 * increment: "42 machinepools in zone a went
 * silent within 8s; 3 of 45 in zone a still renew". A new spell of a group begins once the window
 * has passed with none of its pools falling silent. O(1) per pool falling silent, plus a census of
 * the group's members when it is reported.
 */
import type {Cancel, Clock} from '../../clock.ts'
import {formatDuration} from '../../durations.ts'

/** The labels whose value is a pool's zone, first found wins. */
export const DEFAULT_ZONE_LABELS = ['topology.ironcore.dev/zone', 'topology.kubernetes.io/zone'] as const

/** Fewer pools silent together are not worth a word: two is a coincidence at fleet scale. */
export const DEFAULT_MIN_GROUP = 3

export type GroupDimension = 'zone' | 'host' | 'kind'

/** A group a pool belongs to: the dimension and its value ('' for the kind as a whole). */
export interface GroupKey {
  by: GroupDimension
  value: string
}

export interface SilenceGroupReport {
  kind: string
  by: GroupDimension
  value: string
  /** Pools of the group that fell silent within the window. */
  silent: number
  /** From the first to the last of them (ms). */
  withinMs: number
  /** Pools of the group now, and how many of them still renew (not silent). */
  total: number
  renewing: number
  /** The names of the silent pools (at most ten, for the log). */
  examples: string[]
}

export interface SilenceGroupsOptions {
  kind: string
  clock: Clock
  windowMs: number
  /** How long after a group reached minPools it is reported (the breaker's hold: grace/5). */
  settleMs: number
  minPools?: number
  /** The groups of a pool, from its object and Lease as the caches hold them. */
  keysOf: (name: string) => GroupKey[]
  /** The pools of a group now, and how many of them are silent (past their deadline, unmarked or marked). */
  census: (key: GroupKey) => {total: number; silent: number}
  report: (report: SilenceGroupReport) => void
}

interface Spell {
  /** Pools fallen silent in this spell, with when (evidence ms), oldest first. */
  pools: Map<string, number>
  reported: boolean
  timer?: Cancel
}

/** The groups of a pool by its labels and its Lease holder: zone (if labelled), host (if named), and the kind. */
export function groupKeys(pool: string, labels: Record<string, string> | undefined, holder: string | undefined, zoneLabels: readonly string[] = DEFAULT_ZONE_LABELS): GroupKey[] {
  const keys: GroupKey[] = []
  const zone = zoneLabels.map((label) => labels?.[label]).find((value) => value !== undefined && value !== '')
  if (zone !== undefined) keys.push({by: 'zone', value: zone})
  const host = holderHost(pool, holder)
  if (host !== undefined) keys.push({by: 'host', value: host})
  keys.push({by: 'kind', value: ''})
  return keys
}

/** The host a Lease holder names: `<host>/<anything>`, or `<host>_<uuid>` unless the prefix is the pool itself (IronCore's `<pool>_<uuid>`). */
export function holderHost(pool: string, holder: string | undefined): string | undefined {
  if (holder === undefined || holder === '') return undefined
  const slash = holder.indexOf('/')
  if (slash > 0) return holder.slice(0, slash)
  const underscore = holder.lastIndexOf('_')
  if (underscore <= 0) return undefined
  const prefix = holder.slice(0, underscore)
  return prefix === pool ? undefined : prefix
}

export class SilenceGroups {
  private readonly o: Required<SilenceGroupsOptions>
  private readonly spells = new Map<string, Spell>()

  constructor(options: SilenceGroupsOptions) {
    this.o = {minPools: DEFAULT_MIN_GROUP, ...options}
  }

  /** A pool fell silent (newly past its deadline) at `at` (evidence ms). */
  fellSilent(name: string, at: number): void {
    for (const key of this.o.keysOf(name)) {
      const id = `${key.by}/${key.value}`
      let spell = this.spells.get(id)
      const last = spell === undefined ? undefined : [...spell.pools.values()].at(-1)
      if (spell === undefined || last === undefined || at - last > this.o.windowMs) {
        spell = {pools: new Map(), reported: false}
        this.spells.set(id, spell)
      }
      spell.pools.delete(name)
      spell.pools.set(name, at)
      for (const [pool, when] of spell.pools) {
        if (at - when <= this.o.windowMs) break
        spell.pools.delete(pool)
      }
      if (spell.reported || spell.timer !== undefined || spell.pools.size < this.o.minPools) continue
      const settling = spell
      settling.timer = this.o.clock.setTimer(this.o.settleMs, () => this.report(key, settling))
    }
  }

  /** Forgets every spell (leadership changed, every grace period restarted). */
  clear(): void {
    for (const spell of this.spells.values()) spell.timer?.()
    this.spells.clear()
  }

  private report(key: GroupKey, spell: Spell): void {
    spell.timer = undefined
    spell.reported = true
    const times = [...spell.pools.values()]
    const census = this.o.census(key)
    this.o.report({
      kind: this.o.kind,
      by: key.by,
      value: key.value,
      silent: spell.pools.size,
      withinMs: (times.at(-1) ?? 0) - (times[0] ?? 0),
      total: census.total,
      renewing: Math.max(0, census.total - census.silent),
      examples: [...spell.pools.keys()].slice(0, 10),
    })
  }

  /** The spell of at least minPools with the most silent pools, of a dimension other than the kind as a whole, if any: what a breaker trip is named by. */
  largest(): {by: GroupDimension; value: string; silent: number} | undefined {
    let best: {by: GroupDimension; value: string; silent: number} | undefined
    for (const [id, spell] of this.spells) {
      const [by, ...rest] = id.split('/')
      if (by === 'kind' || spell.pools.size < this.o.minPools) continue
      if (best === undefined || spell.pools.size > best.silent) best = {by: by as GroupDimension, value: rest.join('/'), silent: spell.pools.size}
    }
    return best
  }
}

/** How a group is named in a sentence: "in zone a", "on host h1", "of the kind". */
export function groupPhrase(by: GroupDimension, value: string): string {
  return by === 'zone' ? `in zone ${value}` : by === 'host' ? `on host ${value}` : 'in all'
}

/** The sentence of the log line and the Event: "42 machinepools in zone a went silent within 8s; 3 of 45 in zone a still renew". */
export function silenceGroupMessage(plural: string, r: SilenceGroupReport): string {
  const where = groupPhrase(r.by, r.value)
  const of = r.by === 'kind' ? `${plural}` : `${where}`
  return `${r.silent} ${plural} ${r.by === 'kind' ? '' : `${where} `}went silent within ${formatDuration(Math.round(r.withinMs))}; ${r.renewing} of ${r.total} ${of} still renew`
}
