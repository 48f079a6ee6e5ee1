/**
 * One read of the pools of some kinds and their Leases, as `pool status` shows them without --watch.
 * Each object passes the same checks the controller applies (checkedPool, toLease): a pool the engine
 * could not key is reported, not shown; a pool with a malformed Ready entry is shown as having no Ready
 * and reported; neither stops the others.
 */
import {CoordinationV1Api, CustomObjectsApi, type KubeConfig} from '@kubernetes/client-node'
import {errorMessage, type PoolKind, type Lease, type Pool} from '../core/index.ts'
import {attempt} from './api-errors.ts'
import {DEFAULT_REQUEST_TIMEOUT_MS} from './lease-store.ts'
import {withDeadline} from './request-deadline.ts'
import {toLease} from './lease-store.ts'
import {checkedPool} from './pool-status-store.ts'

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

async function listAllPages<T>(list: (token: string | undefined) => Promise<{items: T[]; metadata?: {_continue?: string; continue?: string}}>): Promise<T[]> {
  const items: T[] = []
  let token: string | undefined
  do {
    const page = await list(token)
    items.push(...page.items)
    token = page.metadata?._continue ?? page.metadata?.continue
  } while (token)
  return items
}

async function readKind(kc: KubeConfig, kind: PoolKind, options: SnapshotOptions, malformed: string[]): Promise<PoolEntry[]> {
  const custom = kc.makeApiClient(CustomObjectsApi)
  const coordination = kc.makeApiClient(CoordinationV1Api)
  const [rawPools, v1Leases] = await Promise.all([
    attempt({verb: 'list', resource: kind.plural}, () =>
      listAllPages((token) =>
        custom.listClusterCustomObject({group: kind.group, version: kind.version, plural: kind.plural, labelSelector: options.selector, limit: PAGE_SIZE, _continue: token}, withDeadline(DEFAULT_REQUEST_TIMEOUT_MS)) as Promise<{items: unknown[]}>,
      ),
    ),
    attempt({verb: 'list', resource: `leases in ${kind.leaseNamespace}`}, () =>
      listAllPages((token) => coordination.listNamespacedLease({namespace: kind.leaseNamespace, limit: PAGE_SIZE, _continue: token}, withDeadline(DEFAULT_REQUEST_TIMEOUT_MS))),
    ),
  ])
  const leases = new Map(v1Leases.map((v1) => [v1.metadata?.name ?? '', toLease(v1)]))
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
