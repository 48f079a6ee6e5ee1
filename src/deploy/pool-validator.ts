/**
 * Validates pools read from the API against the schema their CRD declares (pool-crds.ts), so that the
 * engine never trusts a malformed object: one source of truth for what a pool looks like.
 */
import {Ajv, type ErrorObject, type ValidateFunction} from 'ajv'
import addFormatsModule from 'ajv-formats'
import {POOL_KIND_NAMES, POOL_KINDS, type PoolKindName, type Pool} from '../core/index.ts'
import {poolSchema} from './pool-crds.ts'

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default

const ajv = new Ajv({strict: false, allErrors: false})
addFormats(ajv)
// int64/int32 are OpenAPI formats the API server enforces; for JSON Schema they are just integers.
ajv.addFormat('int64', {type: 'number', validate: Number.isSafeInteger})
ajv.addFormat('int32', {type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31})

const validators = new Map<PoolKindName, ValidateFunction>(POOL_KIND_NAMES.map((name) => [name, ajv.compile(poolSchema(POOL_KINDS[name]))]))

export type PoolValidation = {ok: true; pool: Pool} | {ok: false; field: string; problem: string}

export function validatePool(kind: PoolKindName, object: unknown): PoolValidation {
  const validate = validators.get(kind)
  if (validate === undefined) throw new Error(`no schema for pool kind ${kind}`)
  if (validate(object) && typeof (object as Pool).metadata?.name === 'string') return {ok: true, pool: object as Pool}
  const error: ErrorObject | undefined = validate.errors?.[0]
  return {ok: false, field: error?.instancePath || '/metadata/name', problem: error?.message ?? 'must have a name'}
}
