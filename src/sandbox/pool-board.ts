/**
 * The sandbox's picture of its pools, kept by the same robust list+watch caches the controller uses
 * (one for each kind's pools, one for its Leases), never by polling. Views are computed when asked,
 * so ages are those of the moment of drawing; a listener hears of every pool or Lease event, renewals
 * included, so a drawn RENEWED column stays true.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {type PoolKind, poolView, type PoolView, type Logger} from '../core/index.ts'
import {toLease} from '../kube/stores/lease-store.ts'
import {createLeaseCache, createPoolCache, leaseKey} from '../kube/watch/caches/resource-caches.ts'
import type {SandboxPool} from './options.ts'

type Caches = {pools: ReturnType<typeof createPoolCache>; leases: ReturnType<typeof createLeaseCache>}

export class PoolBoard {
  private readonly caches = new Map<PoolKind['name'], Caches>()
  private readonly listeners = new Set<(pool: SandboxPool) => void>()
  private readonly running: Promise<void>[] = []
  readonly pools: readonly SandboxPool[]

  constructor(kc: KubeConfig, pools: readonly SandboxPool[], logger: Logger) {
    this.pools = pools
    const byName = new Map(pools.map((p) => [`${p.kind.name}/${p.name}`, p]))
    const notify = (kind: PoolKind, name: string) => {
      const pool = byName.get(`${kind.name}/${name}`)
      if (pool !== undefined) for (const listener of this.listeners) listener(pool)
    }
    for (const kind of new Set(pools.map((p) => p.kind))) {
      const caches = {pools: createPoolCache(kc, kind, {logger}), leases: createLeaseCache(kc, kind, {logger})}
      caches.pools.onEvent((event) => notify(kind, event.key))
      caches.leases.onEvent((event) => notify(kind, event.object.metadata.name))
      this.caches.set(kind.name, caches)
    }
  }

  /** Starts the caches and resolves once all are whole; they run until the signal aborts. */
  async start(signal: AbortSignal): Promise<void> {
    for (const {pools, leases} of this.caches.values()) this.running.push(pools.start(signal), leases.start(signal))
    await Promise.all([...this.caches.values()].flatMap(({pools, leases}) => [pools.waitForSync(signal), leases.waitForSync(signal)]))
  }

  /** Resolves when every cache has stopped (after the start signal aborted). */
  async stopped(): Promise<void> {
    await Promise.allSettled(this.running)
  }

  onChange(listener: (pool: SandboxPool) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** The pool as `pool status` would show it at `now`; undefined until the pool is seen. */
  view(pool: SandboxPool, now: number): PoolView | undefined {
    const caches = this.caches.get(pool.kind.name)
    const object = caches?.pools.get(pool.name)
    if (caches === undefined || object === undefined) return undefined
    const lease = caches.leases.get(leaseKey(pool.kind, pool.name))
    return poolView(pool.kind, object, lease === undefined ? undefined : toLease(lease), now)
  }

  /** How many pools are Ready=True now. */
  readyCount(): number {
    return this.pools.filter((pool) => this.view(pool, Date.now())?.ready === 'True').length
  }
}
