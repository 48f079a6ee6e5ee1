/**
 * Translates failed requests (api-request.ts's ApiStatusError, client-node's ApiException) into the
 * core's few error kinds, once, for every adapter in src/kube.
 * The message always names what was attempted (verb and resource), so a log line says what failed.
 */
import {ApiException} from './client-node.ts'
import {ApiStatusError} from './api-request.ts'
import {AlreadyExistsError, ConflictError, ForbiddenError, NotFoundError, RejectedError} from '../../core/index.ts'

/** What was attempted, e.g. {verb: 'update', resource: 'lease ironcore-machinepool-lease/p1'}. */
export interface Attempt {
  verb: string
  resource: string
}

interface StatusBody {
  reason?: string
  message?: string
}

function statusBody(body: unknown): StatusBody {
  if (typeof body === 'string') {
    try {
      return JSON.parse(body) as StatusBody
    } catch {
      return {message: body}
    }
  }
  return typeof body === 'object' && body !== null ? body : {}
}

/** The answer of a request that got one: from the thin path (api-request.ts) or client-node's generated layer. */
function answered(error: unknown): {code: number; body: unknown} | undefined {
  return error instanceof ApiStatusError || error instanceof ApiException ? {code: error.code, body: error.body as unknown} : undefined
}

/** The HTTP status of a failed request, or undefined when the request never got an answer. */
export function httpStatus(error: unknown): number | undefined {
  return answered(error)?.code
}

export function translateApiError(error: unknown, attempt: Attempt): Error {
  const what = `${attempt.verb} ${attempt.resource}`
  const answer = answered(error)
  if (answer === undefined) {
    const cause = error instanceof Error ? error.message : String(error)
    return new Error(`${what}: ${cause}`, {cause: error})
  }
  const body = statusBody(answer.body)
  const detail = body.message ?? `HTTP ${answer.code}`
  switch (answer.code) {
    case 401:
    case 403:
      return new ForbiddenError(`${what}: forbidden (${answer.code}): ${detail}`, {cause: error})
    case 404:
      return new NotFoundError(`${what}: not found: ${detail}`, {cause: error})
    case 409:
      return body.reason === 'AlreadyExists'
        ? new AlreadyExistsError(`${what}: already exists`, {cause: error})
        : new ConflictError(`${what}: conflict: ${detail}`, {cause: error})
    default:
      // Refused as it was (400, 422, a webhook's 4xx): answered. 429 and 5xx are the server's trouble.
      if (answer.code >= 400 && answer.code < 500 && answer.code !== 429) return new RejectedError(`${what}: HTTP ${answer.code}: ${detail}`, answer.code, {cause: error})
      return new Error(`${what}: HTTP ${answer.code}: ${detail}`, {cause: error})
  }
}

/** Runs a call and rethrows its failure translated. */
export async function attempt<T>(what: Attempt, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    throw translateApiError(error, what)
  }
}
