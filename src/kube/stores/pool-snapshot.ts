/**
 * One read of the pools of some kinds and their Leases, as `pool status` shows them without --watch.
 * Each object passes the same checks the controller applies (checkedPool, toLease): a pool the engine
 * could not key is reported, not shown; a pool with a malformed Ready entry is shown as having no Ready
 * and reported; neither stops the others.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {errorMessage, type PoolKind, type Lease, type Pool} from '../../core/index.ts'
import {attempt} from '../http/api-errors.ts'
import {apiRequest} from '../http/api-request.ts'
import {DEFAULT_REQUEST_TIMEOUT_MS, leasePath, toLease, type ServedLease} from './lease-store.ts'
import {checkedPool, poolPath} from './pool-status-store.ts'

export interface PoolEntry {
  kind: PoolKind
  pool: Pool
  lease: Lease | undefined
}

export interface PoolSnapshot {
  entries: PoolEntry[]
  /** Names asked for that no listed kind has. */
  missing: string[]
  /** One line per malformed object or Ready entry, naming the field at fault. */
  malformed: string[]
}

export interface SnapshotOptions {
  selector?: string
  /** Only these pools (any of the kinds); all when empty. */
  names?: readonly string[]
}

/** client-go's page size: a thousand pools come in two requests. */
const PAGE_SIZE = 500

/** Every item of a list, page by page. */
async function listAll<T>(kc: KubeConfig, path: string, query: Record<string, string | undefined> = {}): Promise<T[]> {
  const items: T[] = []
  let token: string | undefined
  do {
    const page = await apiRequest<{items?: T[]; metadata?: {continue?: string}}>(kc, {method: 'GET', path, query: {...query, limit: PAGE_SIZE, continue: token}, timeoutMs: DEFAULT_REQUEST_TIMEOUT_MS})
    items.push(...(page.items ?? []))
    token = page.metadata?.continue || undefined
  } while (token)
  return items
}

async function readKind(kc: KubeConfig, kind: PoolKind, options: SnapshotOptions, malformed: string[]): Promise<PoolEntry[]> {
  const [rawPools, servedLeases] = await Promise.all([
    attempt({verb: 'list', resource: kind.plural}, () => listAll<unknown>(kc, poolPath(kind), {labelSelector: options.selector})),
    attempt({verb: 'list', resource: `leases in ${kind.leaseNamespace}`}, () => listAll<ServedLease>(kc, leasePath(kind.leaseNamespace))),
  ])
  const leases = new Map(servedLeases.map((served) => [served.metadata?.name ?? '', toLease(served)]))
  const entries: PoolEntry[] = []
  for (const raw of rawPools) {
    try {
      const pool = checkedPool(kind, raw, (p, problem) => malformed.push(`${kind.plural} ${p.metadata.name}: ${problem.field} ${problem.problem}`))
      entries.push({kind, pool, lease: leases.get(pool.metadata.name)})
    } catch (error) {
      malformed.push(errorMessage(error))
    }
  }
  return entries
}

/** Pools of the given kinds (in that order, each by name) with their Leases. */
export async function readPools(kc: KubeConfig, kinds: readonly PoolKind[], options: SnapshotOptions = {}): Promise<PoolSnapshot> {
  const malformed: string[] = []
  const perKind = await Promise.all(kinds.map((kind) => readKind(kc, kind, options, malformed)))
  const wanted = new Set(options.names ?? [])
  const entries = perKind
    .map((list) => list.sort((a, b) => a.pool.metadata.name.localeCompare(b.pool.metadata.name)))
    .flat()
    .filter((e) => wanted.size === 0 || wanted.has(e.pool.metadata.name))
  const found = new Set(entries.map((e) => e.pool.metadata.name))
  return {entries, missing: [...wanted].filter((name) => !found.has(name)), malformed}
}

/**
 * The names of the pools of these kinds, sorted, for shell completion: one list request per kind, all
 * at once, each bounded by timeoutMs; a kind that fails (not served, forbidden, too slow) adds none.
 */
export async function poolNames(kc: KubeConfig, kinds: readonly PoolKind[], timeoutMs: number): Promise<string[]> {
  const lists = await Promise.allSettled(
    kinds.map((kind) => apiRequest<{items?: {metadata?: {name?: unknown}}[]}>(kc, {method: 'GET', path: poolPath(kind), query: {limit: PAGE_SIZE}, timeoutMs})),
  )
  const names = lists.flatMap((list) => (list.status === 'fulfilled' ? (list.value.items ?? []).map((item) => item.metadata?.name) : []))
  return [...new Set(names.filter((name): name is string => typeof name === 'string'))].sort()
}
