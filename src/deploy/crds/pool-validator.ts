/**
 * What ironpool checks of the objects it reads, and nothing more: the fields the engine consumes.
 * A pool: its name, UID, generation and resourceVersion, and its Ready entry (the first condition of
 * type Ready). A Lease: its spec fields. Everything else an object carries (another writer's
 * conditions with null times, a taint effect or a state ironpool does not know, fields IronCore adds
 * next year) passes through untouched and never hides a pool from health monitoring.
 *
 * A malformed Ready entry does not hide the pool either: it is reported (the caller logs it once, with
 * the field) and taken out of the list the engine sees, so the engine treats the pool as having no
 * Ready, and its next Ready write replaces the entry. Only a pool the engine cannot even name or
 * key (no name, a UID or generation of the wrong type) is refused.
 */
import {Ajv, type ErrorObject, type ValidateFunction} from 'ajv'
import {CONDITION_STATUSES, READY_CONDITION, type Pool} from '../../core/index.ts'

// validateSchema off: checking these constant schemas against JSON Schema's meta-schema compiled the
// meta-schema first, 50 ms of every process's start-up (bench:poollet, issue 12); a unit test checks
// them against it instead (test/unit/deploy/pool-schemas.test.ts).
const ajv = new Ajv({strict: false, allErrors: false, validateSchema: false})

const int64 = {type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER}
const time = {type: ['string', 'null']}

/** The fields of a pool's metadata the engine reads. */
export const CONSUMED_POOL_SCHEMA = {
  type: 'object',
  required: ['metadata'],
  properties: {
    metadata: {
      type: 'object',
      required: ['name'],
      properties: {name: {type: 'string', minLength: 1}, uid: {type: 'string'}, resourceVersion: {type: 'string'}, generation: int64},
    },
    status: {type: 'object', properties: {conditions: {type: 'array'}}},
  },
}

/** The Ready entry as the engine reads it: IronCore's condition fields, the status one of three. */
export const READY_ENTRY_SCHEMA = {
  type: 'object',
  required: ['type', 'status', 'reason', 'message'],
  properties: {
    type: {const: READY_CONDITION},
    status: {enum: [...CONDITION_STATUSES]},
    reason: {type: 'string'},
    message: {type: 'string'},
    observedGeneration: int64,
    lastUpdateTime: time,
    lastTransitionTime: time,
  },
}

/** The spec fields of a coordination.k8s.io/v1 Lease the engine reads (MicroTimes as strings). */
export const CONSUMED_LEASE_SCHEMA = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        holderIdentity: {type: ['string', 'null']},
        leaseDurationSeconds: {type: 'integer', minimum: 1, maximum: 2 ** 31 - 1},
        acquireTime: time,
        renewTime: time,
        leaseTransitions: {type: 'integer', minimum: 0, maximum: 2 ** 31 - 1},
      },
    },
  },
}

const checkPool = ajv.compile(CONSUMED_POOL_SCHEMA)
const checkReady = ajv.compile(READY_ENTRY_SCHEMA)
const checkLease = ajv.compile(CONSUMED_LEASE_SCHEMA)

/** A field at fault, as a JSON pointer into the object, and what is wrong with it. */
export interface Problem {
  field: string
  problem: string
}

export type PoolValidation =
  /** problem: a malformed Ready entry, taken out of the engine's view (log it once). */
  | {ok: true; pool: Pool; problem?: Problem}
  | ({ok: false} & Problem)

export interface LeaseValidation {
  ok: true
  problem?: Problem
}

function firstError(validate: ValidateFunction, prefix = ''): Problem {
  const error: ErrorObject | undefined = validate.errors?.[0]
  return {field: `${prefix}${error?.instancePath ?? ''}` || '/', problem: error?.message ?? 'is malformed'}
}

/**
 * Checks a pool read from the API. On success the pool is the same object, except that a malformed
 * Ready entry has been removed from its status.conditions (reported as problem).
 */
export function validatePool(object: unknown): PoolValidation {
  if (!checkPool(object)) return {ok: false, ...firstError(checkPool)}
  const pool = object as unknown as Pool
  const conditions = pool.status?.conditions
  const index = conditions?.findIndex((c: unknown) => typeof c === 'object' && c !== null && (c as {type?: unknown}).type === READY_CONDITION) ?? -1
  if (conditions === undefined || index < 0 || checkReady(conditions[index])) return {ok: true, pool}
  const problem = firstError(checkReady, `/status/conditions/${index}`)
  conditions.splice(index, 1)
  return {ok: true, pool, problem: {field: problem.field, problem: `${problem.problem}; the pool is treated as having no Ready`}}
}

/** Whether value is a Ready entry validatePool() keeps as it is (the projections hold such an entry without its list). */
export function isWellFormedReady(value: unknown): boolean {
  return checkReady(value)
}

/**
 * Checks a Lease's spec fields. A Lease is never refused (a refused Lease would read as silence): a
 * malformed field is reported, and toLease() reads it as absent.
 */
export function validateLease(object: unknown): LeaseValidation {
  if (checkLease(object)) return {ok: true}
  const problem = firstError(checkLease)
  return {ok: true, problem: {field: problem.field, problem: `${problem.problem}; read as absent`}}
}
