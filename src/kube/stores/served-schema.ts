/**
 * What the serving API can hold of a pool kind's status, learnt from its OpenAPI v3 document at start:
 * whether the status has a conditions list, and which fields a condition keeps. ironpool's CRDs have
 * conditions with every field; IronCore's aggregated API has no conditions on BucketPool and no
 * lastUpdateTime on VolumePoolCondition, and drops what it lacks with a warning only. Writing what the
 * server cannot hold would look like success and store nothing.
 *
 * /openapi/v3 is readable by every authenticated identity (system:discovery). Its index names each
 * group-version's document by a content-hashed URL, which is then fetched once.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {CONDITION_FIELDS, FULL_WRITE_PLAN, errorMessage, type ConditionField, type Logger, type PoolKind, type StatusWritePlan} from '../../core/index.ts'
import {apiRequest} from '../http/api-request.ts'
import {DEFAULT_REQUEST_TIMEOUT_MS} from './lease-store.ts'

type Schema = Record<string, unknown>

interface OpenApiDocument {
  components?: {schemas?: Record<string, Schema>}
}

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The schema itself, with a `$ref` (directly or as the one entry of `allOf`, as Kubernetes writes it) followed. */
function resolve(document: OpenApiDocument, schema: unknown, depth = 0): Schema | undefined {
  if (!isObject(schema) || depth > 10) return undefined
  const ref = typeof schema.$ref === 'string' ? schema.$ref : Array.isArray(schema.allOf) && schema.allOf.length === 1 && isObject(schema.allOf[0]) ? schema.allOf[0].$ref : undefined
  if (typeof ref !== 'string') return schema
  const name = ref.replace(/^#\/components\/schemas\//, '')
  return resolve(document, document.components?.schemas?.[name], depth + 1)
}

function property(document: OpenApiDocument, schema: Schema | undefined, name: string): Schema | undefined {
  const properties = schema?.properties
  return isObject(properties) ? resolve(document, properties[name]) : undefined
}

/** The kind's object schema: the one whose x-kubernetes-group-version-kind names it. */
function kindSchema(document: OpenApiDocument, kind: PoolKind): Schema | undefined {
  for (const schema of Object.values(document.components?.schemas ?? {})) {
    const gvks = schema['x-kubernetes-group-version-kind']
    if (!Array.isArray(gvks)) continue
    const matches = gvks.some((gvk: unknown) => isObject(gvk) && gvk.group === kind.group && gvk.version === kind.version && gvk.kind === kind.kind)
    if (matches) return schema
  }
  return undefined
}

/**
 * The write plan the document allows for kind, or undefined when the document does not describe the
 * kind. A condition schema that lists no properties (it preserves unknown fields) keeps every field.
 */
export function writePlanFromOpenApi(document: unknown, kind: PoolKind): StatusWritePlan | undefined {
  if (!isObject(document)) return undefined
  const doc = document as OpenApiDocument
  const object = kindSchema(doc, kind)
  if (object === undefined) return undefined
  const conditions = property(doc, property(doc, object, 'status'), 'conditions')
  if (conditions === undefined) return {conditions: false, conditionFields: []}
  const item = resolve(doc, conditions.items)
  if (!isObject(item?.properties)) return FULL_WRITE_PLAN
  const served = new Set(Object.keys(item.properties))
  return {conditions: true, conditionFields: CONDITION_FIELDS.filter((field: ConditionField) => served.has(field))}
}

export interface LearnOptions {
  logger: Logger
  /** Deadline of each of the two requests. Default 10 s. */
  requestTimeoutMs?: number
  /** Reads a document by its server-relative URL; given when several kinds share the reads. */
  read?: (url: string) => Promise<unknown>
}

async function getJson(kc: KubeConfig, serverRelativeUrl: string, timeoutMs: number): Promise<unknown> {
  // The index names each document by a URL with its hash as a query (?hash=...): kept as the server gave it.
  const url = new URL(serverRelativeUrl, 'http://server')
  try {
    return await apiRequest(kc, {method: 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), timeoutMs})
  } catch (error) {
    throw new Error(`GET ${serverRelativeUrl}: ${errorMessage(error)}`, {cause: error})
  }
}

/**
 * The write plan for kind as the API serves it. When the API cannot tell (no OpenAPI v3, the kind not
 * in it, no answer in time), ironpool's CRD shape is assumed and a warning says so: a write the server
 * then does not keep is still caught, because a write counts only if the returned object carries it.
 */
export async function learnWritePlan(kc: KubeConfig, kind: PoolKind, options: LearnOptions): Promise<StatusWritePlan> {
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const read = options.read ?? ((url: string) => getJson(kc, url, timeoutMs))
  const groupVersion = `apis/${kind.group}/${kind.version}`
  try {
    const index = await read('/openapi/v3')
    const paths = isObject(index) && isObject(index.paths) ? index.paths : {}
    const entry = paths[groupVersion]
    const url = isObject(entry) && typeof entry.serverRelativeURL === 'string' ? entry.serverRelativeURL : undefined
    if (url === undefined) throw new Error(`the OpenAPI v3 index has no ${groupVersion}`)
    const plan = writePlanFromOpenApi(await read(url), kind)
    if (plan === undefined) throw new Error(`the OpenAPI v3 document of ${groupVersion} does not describe ${kind.kind}`)
    return plan
  } catch (error) {
    options.logger.warn({kind: kind.name, err: errorMessage(error)}, `could not learn what the API holds of ${kind.plural} status; assuming ironpool's CRDs (conditions with every field)`)
    return FULL_WRITE_PLAN
  }
}

/** The plan in words, for the start-up log line. */
export function describeWritePlan(kind: PoolKind, plan: StatusWritePlan): string {
  if (!plan.conditions) return `this API has no conditions for ${kind.plural}: Ready is not written, the Lease is renewed`
  const missing = CONDITION_FIELDS.filter((field) => !plan.conditionFields.includes(field))
  return missing.length === 0 ? `${kind.plural} conditions with every field` : `${kind.plural} conditions without ${missing.join(', ')}`
}

/** The kinds whose API can hold a Ready condition, for the operator tools (a failure to learn counts as able). */
export async function markableKinds(kc: KubeConfig, kinds: readonly PoolKind[]): Promise<Set<PoolKind['name']>> {
  const quiet: Logger = {debug: () => {}, info: () => {}, warn: () => {}, error: () => {}}
  // One read of the index, and of each group's document, for all kinds at once; a failed read reaches
  // each kind that needs it, whose learnWritePlan then assumes able.
  const reads = new Map<string, Promise<unknown>>()
  const read = (url: string) => {
    if (!reads.has(url)) reads.set(url, getJson(kc, url, DEFAULT_REQUEST_TIMEOUT_MS))
    return reads.get(url)!
  }
  const plans = await Promise.all(kinds.map((kind) => learnWritePlan(kc, kind, {logger: quiet, read})))
  return new Set(kinds.filter((_, i) => plans[i]!.conditions).map((kind) => kind.name))
}
