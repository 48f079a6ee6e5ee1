/**
 * The engine's ports: the small contracts that src/kube and src/iri implement and that unit tests
 * fake. Errors cross them as the kinds in errors.ts.
 */
import type {Lease, Pool, PoolCondition} from './types.ts'

/** Probes a pool's IRI runtime once. Resolves on success; rejects with a ProbeError whose message is the error text. */
export interface RuntimeProbe {
  probe(signal: AbortSignal): Promise<void>
}

/** The Leases of one kind's lease namespace. */
export interface LeaseStore {
  /** The Lease, or undefined when it does not exist. */
  get(name: string): Promise<Lease | undefined>
  /** Creates it; AlreadyExistsError when someone was first. */
  create(lease: Lease): Promise<Lease>
  /** Replaces it with lease.resourceVersion as precondition; ConflictError when it moved. */
  update(lease: Lease): Promise<Lease>
}

/** The pools of one kind, and their status conditions. */
export interface PoolStatusStore {
  /** The pool, or undefined when it does not exist. signal, when given, ends the request early. */
  get(name: string, signal?: AbortSignal): Promise<Pool | undefined>
  /**
   * Writes the whole conditions list of the pool's status, with resourceVersion as precondition
   * (ConflictError when the pool moved; NotFoundError when it is gone). Nothing else in the status
   * is touched. Whole-list, because IronCore's aggregated API replaces the list on a merge patch.
   */
  writeConditions(name: string, resourceVersion: string, conditions: PoolCondition[], signal?: AbortSignal): Promise<Pool>
}

/** Records an event about a pool (deduplicated and rate-limited by the edge). */
export interface EventSink {
  record(event: PoolEvent): void
}

export interface PoolEvent {
  kind: string
  apiVersion: string
  name: string
  uid?: string
  type: 'Normal' | 'Warning'
  reason: string
  message: string
  /** Written on the Event's metadata (e.g. the verdict record, VERDICT_ANNOTATION); the edge bounds their size. */
  annotations?: Record<string, string>
}

/** The logger the engine speaks to: pino's shape, reduced to what the core uses. */
export interface Logger {
  debug(obj: object, msg: string): void
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}
