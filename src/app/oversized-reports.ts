/**
 * What the controller says of an object its caches leave out for its size (issue 29): besides the
 * cache's own log line, a Warning Event on the kind's CRD naming the object, and two gauges, the count
 * per cache and each object's size by name (the first {@link NAMED_SERIES_LIMIT} per cache, so that
 * padding cannot grow the metrics without bound), both back to nothing once the object is gone or
 * small again. The Event is on the CRD, as the controller's other kind-wide Events are: a Lease may
 * name no pool, and the controller's RBAC writes Events where those go.
 */
import {Gauge, type Registry} from 'prom-client'
import {kindObject, type EventSink, type PoolKind} from '../core/index.ts'
import type {CacheObserver} from '../kube/watch/list-watch-options.ts'
import type {SkippedObject} from '../kube/watch/list-watch-oversized.ts'

/** The reason of the Event that names an object left out of the controller's view for its size. */
export const OVERSIZED_OBJECT_REASON = 'OversizedObjectSkipped'
/** Per cache, at most this many objects get a series of their own. */
export const NAMED_SERIES_LIMIT = 100

export interface OversizedMetrics {
  objects: Gauge<'resource'>
  bytes: Gauge<'resource' | 'object'>
}

export function createOversizedMetrics(registry: Registry): OversizedMetrics {
  const registers = [registry]
  return {
    objects: new Gauge({name: 'ironpool_cache_oversized_objects', help: 'Objects left out of a cache because each alone is over the size limit of one object, by cache.', labelNames: ['resource'], registers}),
    bytes: new Gauge({name: 'ironpool_cache_oversized_object_bytes', help: `The size of each object left out of a cache for its size, by cache and object (namespace/name; the first ${NAMED_SERIES_LIMIT} per cache).`, labelNames: ['resource', 'object'], registers}),
  }
}

function eventMessage(resource: string, object: SkippedObject, left: string): string {
  return `${resource}: ${object.key} is ${object.bytes} bytes, over the limit of ${object.limitBytes} bytes for one object; left out of the controller's view (${left}) until it is smaller or deleted`
}

/** The cache observer hooks that report a kind's skipped objects. */
export function oversizedObserver(kind: PoolKind, resource: string, events: EventSink, metrics: OversizedMetrics | undefined, left: string): Pick<CacheObserver, 'skipped' | 'cleared'> {
  const named = new Set<string>()
  let count = 0
  metrics?.objects.set({resource}, 0)
  return {
    skipped(object) {
      count++
      metrics?.objects.set({resource}, count)
      if (named.size < NAMED_SERIES_LIMIT) {
        named.add(object.key)
        metrics?.bytes.set({resource, object: object.key}, object.bytes)
      }
      events.record({...kindObject(kind), type: 'Warning', reason: OVERSIZED_OBJECT_REASON, message: eventMessage(resource, object, left)})
    },
    cleared(key) {
      count = Math.max(0, count - 1)
      metrics?.objects.set({resource}, count)
      if (named.delete(key)) metrics?.bytes.remove({resource, object: key})
    },
  }
}
