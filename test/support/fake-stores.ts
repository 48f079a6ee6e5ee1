/**
 * In-memory LeaseStore and PoolStatusStore with the API server's rules that the engine relies on:
 * every write bumps a resourceVersion shared by all objects (as etcd's revision), an update with a
 * stale resourceVersion is a ConflictError, create of an existing object is AlreadyExistsError. Reads
 * and writes hand out copies, so the code under test cannot change stored state by mutation.
 * Calls are scripted through `script` (see CallScript).
 */
import {AlreadyExistsError, ConflictError, NotFoundError} from '../../src/core/errors.ts'
import type {LeaseStore, PoolStatusStore} from '../../src/core/ports.ts'
import type {Lease, Pool, PoolCondition} from '../../src/core/types.ts'
import {CallScript} from './call-script.ts'

let revision = 0
function nextResourceVersion(): string {
  revision += 1
  return String(revision)
}

function copy<T>(value: T): T {
  return structuredClone(value)
}

/** Runs a call asynchronously, as a real store would: whatever it throws becomes a rejection. */
function call<V extends string, T>(script: CallScript<V>, verb: V, work: () => T): Promise<T> {
  return new Promise((resolve) => {
    script.enter(verb)
    resolve(work())
  })
}

export class FakeLeaseStore implements LeaseStore {
  readonly script = new CallScript<'get' | 'create' | 'update'>()
  /** The Lease each update() was called with, in order (a copy, resourceVersion as sent). */
  readonly updates: Lease[] = []
  private readonly leases = new Map<string, Lease>()

  get(name: string): Promise<Lease | undefined> {
    return call(this.script, 'get', () => this.peek(name))
  }

  create(lease: Lease): Promise<Lease> {
    return call(this.script, 'create', () => {
      if (this.leases.has(lease.name)) throw new AlreadyExistsError(`leases.coordination.k8s.io "${lease.name}" already exists`)
      return this.store(lease)
    })
  }

  update(lease: Lease): Promise<Lease> {
    return call(this.script, 'update', () => {
      this.updates.push(copy(lease))
      const current = this.leases.get(lease.name)
      if (current === undefined) throw new NotFoundError(`leases.coordination.k8s.io "${lease.name}" not found`)
      if (lease.resourceVersion !== current.resourceVersion) {
        throw new ConflictError(`Operation cannot be fulfilled on leases.coordination.k8s.io "${lease.name}": the object has been modified`)
      }
      return this.store(lease)
    })
  }

  /** The stored Lease, or undefined; for assertions, bypassing the script. */
  peek(name: string): Lease | undefined {
    const lease = this.leases.get(name)
    return lease === undefined ? undefined : copy(lease)
  }

  /** Stores a Lease as another writer would, with a new resourceVersion; bypasses the script. */
  put(lease: Lease): Lease {
    return this.store(lease)
  }

  delete(name: string): void {
    this.leases.delete(name)
  }

  private store(lease: Lease): Lease {
    const stored = {...copy(lease), resourceVersion: nextResourceVersion()}
    this.leases.set(stored.name, stored)
    return copy(stored)
  }
}

export class FakePoolStatusStore implements PoolStatusStore {
  readonly script = new CallScript<'get' | 'writeConditions'>()
  /** As IronCore's API for BucketPool: a write of conditions is answered, but the list is dropped. */
  dropsConditions = false
  private readonly pools = new Map<string, Pool>()

  get(name: string): Promise<Pool | undefined> {
    return call(this.script, 'get', () => this.peek(name))
  }

  writeConditions(name: string, resourceVersion: string, conditions: PoolCondition[]): Promise<Pool> {
    return call(this.script, 'writeConditions', () => {
      const current = this.pools.get(name)
      if (current === undefined) throw new NotFoundError(`pool "${name}" not found`)
      if (resourceVersion !== current.metadata.resourceVersion) {
        throw new ConflictError(`Operation cannot be fulfilled on pool "${name}": the object has been modified`)
      }
      if (this.dropsConditions) return this.store({...current})
      return this.store({...current, status: {...current.status, conditions: copy(conditions)}})
    })
  }

  /** The stored pool, or undefined; for assertions, bypassing the script. */
  peek(name: string): Pool | undefined {
    const pool = this.pools.get(name)
    return pool === undefined ? undefined : copy(pool)
  }

  /** Stores a pool as another writer would, with a new resourceVersion; bypasses the script. */
  put(pool: Pool): Pool {
    return this.store(pool)
  }

  delete(name: string): void {
    this.pools.delete(name)
  }

  private store(pool: Pool): Pool {
    const stored = copy(pool)
    stored.metadata.resourceVersion = nextResourceVersion()
    this.pools.set(stored.metadata.name, stored)
    return copy(stored)
  }
}
