/**
 * What the controller's caches keep of each object (issue 27): the fields a verdict and a write need,
 * made as the object arrives (client-go's SetTransform), so that neither managedFields nor the rest of
 * a pool's status (IronCore's capacity, classes, addresses) nor a Lease's other metadata stay in memory
 * for every pool. Values are kept as served, never coerced: the gate's validation sees what the server
 * sent, field for field.
 *
 * Each object is one flat record (ProjectedPool, ProjectedLease), not the served shape's nest of
 * metadata, spec and status objects: at 100,000 pools every object less is some 30–60 bytes a pool.
 * Readers still see the shapes they know (Pool, a served Lease) through getters that return the record
 * itself (metadata, a Lease's spec) or build the little they need on read (a pool's status). Nothing
 * may spread a record ({...pool}): the views live on the prototype, and a spread would lose them.
 *
 * A pool keeps its whole conditions list, not only Ready: the Unknown write is a merge patch of
 * status.conditions, which replaces the list, so it must carry the other writers' conditions as they
 * are (a stale list is refused by the write's resourceVersion precondition and read again). In the
 * usual case, a list of one well-formed Ready entry, the entry is held without its list. Strings that
 * repeat across pools are shared (Interner, below), and so is a name both caches hold.
 *
 * The projections take the parsed object apart and keep parts of it (the Ready entry, with its strings
 * swapped for shared ones): the object must be fresh from JSON.parse, held by nobody else. `pool
 * status` and the confirming reads get their objects fresh, whole.
 */
import type {Pool, PoolCondition, PoolStatus} from '../../../core/index.ts'
import {isWellFormedReady} from '../../../deploy/crds/pool-validator.ts'
import type {KubeObject} from '../list-watch-store.ts'

/**
 * Shared strings (issue 27): JSON.parse gives every object its own copy of each value, so at 100,000
 * pools there were 100,000 copies of "HeartbeatReceived", of the poollet's Ready message, of the Lease
 * namespace, and two of every pool's name (the pool's and its Lease's). The intern table is bounded
 * twice, so that values an attacker (or a buggy writer) makes unique per object cannot grow it without
 * end: only strings up to maxLength are taken, and once it holds maxEntries it takes no more (nothing
 * is evicted: a full table costs sharing, never correctness). Only fields whose values repeat across
 * pools by design are interned (condition types, statuses, reasons, messages; API versions, kinds,
 * namespaces), never times or names, so a healthy fleet needs a few dozen entries.
 */
export interface InternLimits {
  /** Strings longer than this are returned as they are. */
  maxLength: number
  /** Once this many are held, a string not held is returned as it is. */
  maxEntries: number
}

/** At most 256 characters a value and 1,024 values: well under 1 MiB, whatever arrives. */
export const INTERN_LIMITS: InternLimits = {maxLength: 256, maxEntries: 1024}

export class Interner {
  private readonly table = new Map<string, string>()
  private readonly limits: InternLimits

  constructor(limits: InternLimits = INTERN_LIMITS) {
    this.limits = limits
  }

  get size(): number {
    return this.table.size
  }

  /** The instance held for this value (taken now if there is room), or the value itself. */
  intern<T>(value: T): T {
    if (typeof value !== 'string') return value
    const held = this.table.get(value)
    if (held !== undefined) return held as T
    if (value.length > this.limits.maxLength || this.table.size >= this.limits.maxEntries) return value
    this.table.set(value, value)
    return value
  }
}

/** The interner every projection shares: one table per process. */
export const sharedStrings = new Interner()

/**
 * held when it equals value, else value: a pool's name and its Lease's name are the same text, and
 * this keeps one instance of it for both caches (and for every Map keyed by it downstream: the
 * engine's records and deadlines take the name from the objects).
 */
export function sameName(value: string, held: string | undefined): string {
  return held !== undefined && held === value ? held : value
}

/** A Lease as the watch delivers it (raw JSON, or its projection; toLease() in lease-store.ts converts it). */
export interface RawLease extends KubeObject {
  metadata: {name: string; namespace?: string; resourceVersion?: string}
  spec?: object
}

/** The name string the other cache already holds for this name, if it holds one (sameName). */
export type HeldName = (name: string) => string | undefined

export interface ProjectionOptions {
  /** A pool's labels to keep (the controller's zone labels). Default none. */
  keepLabels?: readonly string[]
  heldName?: HeldName
  /** Default: the process's shared table. */
  strings?: Interner
}

type Loose = Record<string, unknown>

const isObject = (value: unknown): value is Loose => typeof value === 'object' && value !== null

/** The condition fields whose values repeat across pools: shared. Times and observedGeneration are each pool's own. */
function internCondition(entry: unknown, strings: Interner): void {
  if (!isObject(entry)) return
  entry.type = strings.intern(entry.type)
  entry.status = strings.intern(entry.status)
  entry.reason = strings.intern(entry.reason)
  entry.message = strings.intern(entry.message)
}

function heldNameOf(name: unknown, heldName: HeldName | undefined): unknown {
  return typeof name === 'string' && heldName !== undefined ? sameName(name, heldName(name)) : name
}

/**
 * A pool as the controller's cache keeps it. The fields are typed as Pool reads them but hold what was
 * served (validatePool() refuses what is not well-formed, as it refuses a whole object).
 */
export class ProjectedPool implements Pool, KubeObject {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly uid: string | undefined
  readonly resourceVersion: string | undefined
  readonly generation: number | undefined
  /** Of its labels only those asked for; undefined when it has none of them. */
  readonly labels: Record<string, string> | undefined
  /**
   * status.conditions: undefined when none was served; the Ready entry itself when lone is set (the
   * list was that one well-formed entry); else the list as served, so that validatePool()'s removal
   * of a malformed Ready entry from it holds.
   */
  private readonly held: unknown
  private readonly lone: boolean

  constructor(raw: Loose, metadata: Loose, options: ProjectionOptions) {
    const strings = options.strings ?? sharedStrings
    this.apiVersion = strings.intern(raw.apiVersion) as string
    this.kind = strings.intern(raw.kind) as string
    this.name = heldNameOf(metadata.name, options.heldName) as string
    this.uid = metadata.uid as string | undefined
    this.resourceVersion = metadata.resourceVersion as string | undefined
    this.generation = metadata.generation as number | undefined
    this.labels = keptLabels(metadata.labels, options.keepLabels ?? [])
    const status = raw.status
    const conditions = isObject(status) && 'conditions' in status ? status.conditions : undefined
    if (Array.isArray(conditions)) for (const entry of conditions) internCondition(entry, strings)
    this.lone = Array.isArray(conditions) && conditions.length === 1 && isWellFormedReady(conditions[0])
    this.held = this.lone ? (conditions as unknown[])[0] : conditions
  }

  /** The record is its own metadata: nothing copied. */
  get metadata(): this {
    return this
  }

  /** status.conditions as served (the lone entry in a list made on read), or undefined when none was served. */
  get status(): PoolStatus | undefined {
    if (this.held === undefined) return undefined
    return {conditions: (this.lone ? [this.held] : this.held) as PoolCondition[]}
  }
}

function keptLabels(labels: unknown, keep: readonly string[]): Record<string, string> | undefined {
  if (keep.length === 0 || !isObject(labels)) return undefined
  let kept: Record<string, string> | undefined
  for (const key of keep) if (labels[key] !== undefined) (kept ??= {})[key] = labels[key] as string
  return kept
}

/**
 * A pool as the controller's cache keeps it: kind, name, uid, resourceVersion, generation,
 * status.conditions, and of its labels only those named in keepLabels (the zone labels that group
 * correlated silence and the per-zone breaker: a short string or two per pool).
 */
export function projectPool(object: unknown, options: ProjectionOptions = {}): ProjectedPool {
  const raw = isObject(object) ? object : {}
  return new ProjectedPool(raw, isObject(raw.metadata) ? raw.metadata : {}, options)
}

/**
 * A Lease as the controller's cache keeps it: name, namespace, resourceVersion, and of its spec the
 * holder, the duration, the renewal and the transitions, as served. No acquireTime: nothing the
 * controller does reads it (the poollet's and the leader's Lease stores read their Leases whole).
 */
export class ProjectedLease implements RawLease {
  readonly name: string
  readonly namespace: string | undefined
  readonly resourceVersion: string | undefined
  readonly holderIdentity: unknown
  readonly leaseDurationSeconds: unknown
  readonly renewTime: unknown
  readonly leaseTransitions: unknown

  constructor(metadata: Loose, spec: Loose, options: ProjectionOptions) {
    const strings = options.strings ?? sharedStrings
    this.name = heldNameOf(metadata.name, options.heldName) as string
    this.namespace = strings.intern(metadata.namespace) as string | undefined
    this.resourceVersion = metadata.resourceVersion as string | undefined
    this.holderIdentity = spec.holderIdentity
    this.leaseDurationSeconds = spec.leaseDurationSeconds
    this.renewTime = spec.renewTime
    this.leaseTransitions = spec.leaseTransitions
  }

  /** The record is its own metadata and spec: nothing copied (toLease() reads the spec's fields as it reads a served one's). */
  get metadata(): this {
    return this
  }

  get spec(): this {
    return this
  }
}

export function projectLease(object: unknown, options: ProjectionOptions = {}): ProjectedLease {
  const raw = isObject(object) ? object : {}
  return new ProjectedLease(isObject(raw.metadata) ? raw.metadata : {}, isObject(raw.spec) ? raw.spec : {}, options)
}
