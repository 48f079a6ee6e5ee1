/**
 * The smallest PoolStatusStore and pool cache the engine needs: a Map. In the engine bench no deadline
 * falls due while it measures, so the store is read by getPool only; writes work for completeness.
 */
import type {PoolStatusStore} from '../../src/core/ports.ts'
import type {Pool, PoolCondition} from '../../src/core/types.ts'

export class MemoryPools implements PoolStatusStore {
  readonly pools = new Map<string, Pool>()
  private revision = 0

  get(name: string): Promise<Pool | undefined> {
    return Promise.resolve(this.pools.get(name))
  }

  writeConditions(name: string, _resourceVersion: string, conditions: PoolCondition[]): Promise<Pool> {
    const pool = this.pools.get(name)
    if (pool === undefined) return Promise.reject(new Error(`pool ${name} not found`))
    const written = {...pool, metadata: {...pool.metadata, resourceVersion: String(++this.revision)}, status: {...pool.status, conditions}}
    this.pools.set(name, written)
    return Promise.resolve(written)
  }
}
