/**
 * What may enter a list+watch cache's store: an object with a name that passes validate(). An object that
 * fails is logged once per distinct problem (field at fault), not on every event or relist, and counted
 * each time; so is an object admitted with a problem (a malformed field the engine reads as absent, such
 * as a pool's Ready entry). The memory of logged problems holds only objects that still have one.
 */
import type {Logger} from '../../core/index.ts'
import type {Validation} from './list-watch-options.ts'
import {objectKey, type KubeObject} from './list-watch-store.ts'

export interface GateInit<T> {
  resource: string
  logger: Logger
  validate: ((object: T) => Validation) | undefined
  /** Called for every rejection, logged or not (the metric). */
  onInvalid: () => void
}

export class ObjectGate<T extends KubeObject> {
  /** Key → the problem last logged for it. */
  private readonly logged = new Map<string, string>()
  private readonly init: GateInit<T>

  constructor(init: GateInit<T>) {
    this.init = init
  }

  /** The object's key, or undefined when it has none (logged). */
  key(object: T): string | undefined {
    const key = objectKey(object ?? {})
    if (key === undefined) this.reject('(no name)', '/metadata/name', 'must have a name')
    return key
  }

  /** Whether the store may hold this object under key. */
  admit(key: string, object: T): boolean {
    const result = this.init.validate?.(object) ?? {ok: true}
    if (!result.ok) {
      this.reject(key, result.field, result.problem)
      return false
    }
    if (result.problem === undefined) this.logged.delete(key)
    else this.note(key, result.problem.field, result.problem.problem, 'malformed field read as absent; the object is kept')
    return true
  }

  /** The object is gone: a new invalid version of it would be news again. */
  forget(key: string): void {
    this.logged.delete(key)
  }

  /** After a relist: forgets every key the list did not contain. */
  retainOnly(keys: ReadonlySet<string>): void {
    for (const key of this.logged.keys()) if (!keys.has(key)) this.logged.delete(key)
  }

  private reject(key: string, field: string, problem: string): void {
    this.note(key, field, problem, 'invalid object left out of the cache')
  }

  private note(key: string, field: string, problem: string, message: string): void {
    this.init.onInvalid()
    const what = `${field}: ${problem}`
    if (this.logged.get(key) === what) return
    this.logged.set(key, what)
    this.init.logger.warn({resource: this.init.resource, key, field, problem}, message)
  }
}
