/**
 * The core's EventSink on core/v1 Events, after client-go's recorder cut to what ironpool needs: a
 * repeat of the same event (object, reason, message) within the aggregation window bumps the count
 * of the Event already written instead of writing a new one, and a token bucket per object keeps a
 * flapping pool from flooding the API. Recording never blocks the caller and never throws: an event
 * is worth less than the work that reports it. Each request has a deadline, and Events of different
 * objects are written independently: one hung request delays no other object's Events.
 */
import type {CoreV1Event, KubeConfig} from '@kubernetes/client-node'
import {type Clock, errorMessage, type EventSink, type Logger, type PoolEvent} from '../../core/index.ts'
import {apiRequest, MERGE_PATCH} from '../http/api-request.ts'

/** client-go's spam filter: a burst of 25 per object, then one every 5 minutes. */
const BURST = 25
const REFILL_MS = 5 * 60_000
/** Repeats within this window update one Event (client-go aggregates over 10 minutes). */
const AGGREGATION_MS = 10 * 60_000
/** Events of cluster-scoped objects live here, as kubectl and the kubelet put those of Nodes. */
export const CLUSTER_EVENT_NAMESPACE = 'default'
/**
 * An annotation value longer than this is left off its Event (and logged): a verdict record is under a
 * kilobyte, and the API refuses an object whose annotations pass 256 KiB.
 */
export const MAX_ANNOTATION_BYTES = 16 * 1024
/** An Event that takes longer than this is given up (and logged): it must not hold up the next ones. */
export const EVENT_REQUEST_TIMEOUT_MS = 10_000

interface Bucket {
  tokens: number
  refilledAt: number
}

interface Written {
  name: string
  count: number
  at: number
}

export interface EventRecorderOptions {
  kubeConfig: KubeConfig
  clock: Clock
  logger: Logger
  component: string
  /** Test seam: the namespace Events are written to. */
  namespace?: string
  /** Default {@link EVENT_REQUEST_TIMEOUT_MS}. */
  requestTimeoutMs?: number
}

/**
 * An Event's name, client-go's `<object>.<UnixNano in hex>`: the wall millisecond, with the recorder's
 * sequence and a random part as the sub-millisecond digits. Within one recorder, 1,000 Events in one
 * millisecond get distinct names (24 oversized Leases reported at once collided 1 time in 15 with a
 * random part alone, and the API refused the second of a pair: AlreadyExists, the Event lost); two
 * replicas naming an Event for the same object in the same millisecond collide 1 time in 1,000 at most.
 */
export function eventName(objectName: string, wallMs: number, sequence: number, random: number): string {
  const subMs = (sequence % 1_000) * 1_000 + Math.min(999, Math.floor(random * 1_000))
  return `${objectName}.${(BigInt(wallMs) * 1_000_000n + BigInt(subMs)).toString(16)}`
}

export class EventRecorder implements EventSink {
  private readonly buckets = new Map<string, Bucket>()
  private readonly written = new Map<string, Written>()
  private readonly o: EventRecorderOptions
  private readonly namespace: string
  /** Per object, the chain of its Events in flight: in order for one object, independent across objects. */
  private readonly inFlight = new Map<string, Promise<void>>()
  /** Events named so far: keeps the names of a burst within one millisecond apart. */
  private sequence = 0

  constructor(options: EventRecorderOptions) {
    this.o = options
    this.namespace = options.namespace ?? CLUSTER_EVENT_NAMESPACE
  }

  record(event: PoolEvent): void {
    const now = this.o.clock.monotonic()
    const objectKey = `${event.kind}/${event.name}`
    if (!this.take(objectKey, now)) {
      this.o.logger.debug({object: objectKey, reason: event.reason}, 'event dropped by the rate limit')
      return
    }
    this.prune(now)
    const wall = this.o.clock.wall()
    const chain = (this.inFlight.get(objectKey) ?? Promise.resolve())
      .then(() => this.write(event, now, wall))
      .catch(() => {})
      .finally(() => {
        if (this.inFlight.get(objectKey) === chain) this.inFlight.delete(objectKey)
      })
    this.inFlight.set(objectKey, chain)
  }

  /**
   * Resolves when every event recorded so far has been written (or has failed, or timed out), or
   * after timeoutMs if given, whichever comes first.
   */
  async flush(timeoutMs?: number): Promise<void> {
    const all = Promise.all([...this.inFlight.values()])
    if (timeoutMs === undefined) return void (await all)
    let timer: NodeJS.Timeout | undefined
    const expired = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))
    try {
      await Promise.race([all, expired])
    } finally {
      clearTimeout(timer)
    }
  }

  private take(key: string, now: number): boolean {
    const bucket = this.buckets.get(key) ?? {tokens: BURST, refilledAt: now}
    const refills = Math.floor((now - bucket.refilledAt) / REFILL_MS)
    if (refills > 0) {
      bucket.tokens = Math.min(BURST, bucket.tokens + refills)
      bucket.refilledAt += refills * REFILL_MS
    }
    this.buckets.set(key, bucket)
    if (bucket.tokens <= 0) return false
    bucket.tokens--
    return true
  }

  /** Forgets aggregation entries and full buckets past their window, so memory does not grow with churn. */
  private prune(now: number): void {
    for (const [key, entry] of this.written) if (now - entry.at > AGGREGATION_MS) this.written.delete(key)
    for (const [key, bucket] of this.buckets) if (bucket.tokens >= BURST && now - bucket.refilledAt > REFILL_MS) this.buckets.delete(key)
  }

  private async write(event: PoolEvent, now: number, wall: number): Promise<void> {
    const key = `${event.kind}/${event.name}/${event.reason}/${event.message}`
    const time = new Date(wall).toISOString()
    const previous = this.written.get(key)
    try {
      if (previous !== undefined) {
        previous.count++
        previous.at = now
        // A repeat carries its own annotations (a verdict record of this occurrence): the newest wins.
        const annotations = this.annotations(event)
        await apiRequest(this.o.kubeConfig, {
          method: 'PATCH',
          path: `${this.eventsPath()}/${encodeURIComponent(previous.name)}`,
          body: {count: previous.count, lastTimestamp: time, ...(annotations === undefined ? {} : {metadata: {annotations}})},
          contentType: MERGE_PATCH,
          timeoutMs: this.timeoutMs(),
        })
        return
      }
      const name = eventName(event.name, wall, this.sequence++, Math.random())
      // CoreV1Event's shape, with its times as the wire carries them (RFC 3339 strings).
      const body: Omit<CoreV1Event, 'firstTimestamp' | 'lastTimestamp'> & {firstTimestamp: string; lastTimestamp: string} = {
        metadata: {name, namespace: this.namespace, annotations: this.annotations(event)},
        involvedObject: {apiVersion: event.apiVersion, kind: event.kind, name: event.name, uid: event.uid},
        reason: event.reason,
        message: event.message,
        type: event.type,
        source: {component: this.o.component},
        reportingComponent: this.o.component,
        firstTimestamp: time,
        lastTimestamp: time,
        count: 1,
      }
      await apiRequest(this.o.kubeConfig, {method: 'POST', path: this.eventsPath(), body, timeoutMs: this.timeoutMs()})
      this.written.set(key, {name, count: 1, at: now})
    } catch (error) {
      this.o.logger.warn({object: `${event.kind}/${event.name}`, reason: event.reason, error: errorMessage(error)}, 'could not record event')
    }
  }

  /** The event's annotations within {@link MAX_ANNOTATION_BYTES} each; undefined when it has none. */
  private annotations(event: PoolEvent): Record<string, string> | undefined {
    if (event.annotations === undefined) return undefined
    const kept: Record<string, string> = {}
    for (const [key, value] of Object.entries(event.annotations)) {
      if (Buffer.byteLength(value) <= MAX_ANNOTATION_BYTES) kept[key] = value
      else this.o.logger.warn({object: `${event.kind}/${event.name}`, reason: event.reason, annotation: key, bytes: Buffer.byteLength(value)}, 'event annotation too long; left off')
    }
    return kept
  }

  private eventsPath(): string {
    return `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/events`
  }

  private timeoutMs(): number {
    return this.o.requestTimeoutMs ?? EVENT_REQUEST_TIMEOUT_MS
  }
}
