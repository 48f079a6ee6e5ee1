/**
 * The objects a list+watch cache leaves out for their size (issue 29), by key: each is reported once
 * when it is first left out (log, and the observer, which the controller turns into an Event and a
 * metric naming it), and once more when it is gone or small again. A relist replaces the whole set.
 */
import type {Logger} from '../../core/index.ts'
import type {OversizedObject} from './list-request.ts'
import {objectKey} from './list-watch-store.ts'

/** An object left out for its size, with its key in the cache. */
export interface SkippedObject extends OversizedObject {
  key: string
}

export interface OversizedReports {
  /** An object is left out for its size (once per object, until it is gone). */
  skipped(object: SkippedObject): void
  /** An object left out is gone, or small enough again. */
  cleared(key: string): void
}

export class OversizedLedger {
  private readonly held = new Map<string, SkippedObject>()
  private readonly resource: string
  private readonly logger: Logger
  private readonly reports: OversizedReports

  constructor(resource: string, logger: Logger, reports: OversizedReports) {
    this.resource = resource
    this.logger = logger
    this.reports = reports
  }

  get size(): number {
    return this.held.size
  }

  /** The key of an oversized object, or undefined when its first bytes did not name it. */
  static keyOf(object: Pick<OversizedObject, 'name' | 'namespace'>): string | undefined {
    return objectKey({metadata: {name: object.name, namespace: object.namespace}})
  }

  /** An object is left out: reported if it was not already. */
  skip(key: string, object: OversizedObject): void {
    const known = this.held.get(key)
    this.held.set(key, {...object, key})
    if (known !== undefined) return
    this.logger.warn(
      {resource: this.resource, key, bytes: object.bytes, limitBytes: object.limitBytes, resourceVersion: object.resourceVersion},
      'object larger than the limit of one object left out of the cache; the view stays whole without it',
    )
    this.reports.skipped({...object, key})
  }

  /** The object is gone or was taken in: no longer skipped. */
  clear(key: string): void {
    if (!this.held.delete(key)) return
    this.logger.info({resource: this.resource, key}, 'object no longer left out for its size')
    this.reports.cleared(key)
  }

  /** After a list: the objects it left out are the whole set. */
  replace(objects: readonly OversizedObject[]): Set<string> {
    const keys = new Set<string>()
    for (const object of objects) {
      const key = OversizedLedger.keyOf(object)
      if (key !== undefined) keys.add(key)
    }
    for (const key of [...this.held.keys()]) if (!keys.has(key)) this.clear(key)
    for (const object of objects) {
      const key = OversizedLedger.keyOf(object)
      if (key !== undefined) this.skip(key, object)
      else this.logger.warn({resource: this.resource, bytes: object.bytes, limitBytes: object.limitBytes}, 'an object too large to name left out of the cache')
    }
    return keys
  }
}
