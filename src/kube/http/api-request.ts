/**
 * One JSON request to the API server, without client-node's generated API layer: the thin path every
 * call in src/kube takes for the resources ironpool reads and writes (Leases, pools, Events, lists,
 * discovery, OpenAPI). client-node still does what it is the reference for: the kubeconfig, and each
 * request's authentication (applySecurityAuthentication: certificates, tokens, exec and auth plugins,
 * impersonation), which also hands over the connection pool of that identity (node-dispatcher.ts, kept
 * and shared by kubeconfig.ts, rate-limited by request-rate.ts). Only the sending and the decoding are ours.
 *
 * Why: the generated layer sends through fetch and walks every object through its
 * ObjectSerializer; a poollet tick (one Lease PUT) cost 8–9 ms of CPU that way, and its models are a
 * module graph of their own in every process that loads them. Figures: `npm run bench:poollet`,
 * `npm run bench:cli` (bench/README.md, issue 12). The objects come back as the wire JSON, so nothing
 * the server sent is lost in a model that does not know a field (a Lease written back keeps it).
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {HttpMethod, RequestContext} from './client-node.ts'
import {AnswerTooLargeError, NodeDispatcher, readText, type RequestDispatcher} from './node-dispatcher.ts'
import {deadlineSignal} from './request-deadline.ts'

export type ApiMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** The content type of a JSON merge patch (RFC 7386). */
export const MERGE_PATCH = 'application/merge-patch+json'

export interface ApiRequest {
  method: ApiMethod
  /** Under the cluster's server, e.g. /apis/coordination.k8s.io/v1/namespaces/x/leases/y. */
  path: string
  /** Query parameters; undefined ones are left out. */
  query?: Readonly<Record<string, string | number | boolean | undefined>>
  /** Sent as JSON. */
  body?: unknown
  /** Default application/json; a merge patch says application/merge-patch+json. */
  contentType?: string
  /** The whole exchange, headers and body, must end within this. */
  timeoutMs: number
  /** Also ends the request (shutdown, leadership lost). */
  signal?: AbortSignal
}

/** An answer other than 2xx: its HTTP status and body (the Status object the API server sends, or text). */
export class ApiStatusError extends Error {
  override readonly name = 'ApiStatusError'
  readonly code: number
  readonly body: unknown
  constructor(code: number, body: unknown) {
    const message = typeof body === 'object' && body !== null && typeof (body as {message?: unknown}).message === 'string' ? (body as {message: string}).message : `HTTP ${code}`
    super(message)
    this.code = code
    this.body = body
  }
}

const METHODS: Record<ApiMethod, HttpMethod> = {GET: HttpMethod.GET, POST: HttpMethod.POST, PUT: HttpMethod.PUT, PATCH: HttpMethod.PATCH, DELETE: HttpMethod.DELETE}

/** The request's URL under the current cluster's server. */
export function apiUrl(kc: KubeConfig, path: string, query: ApiRequest['query'] = {}): URL {
  const server = kc.getCurrentCluster()?.server
  if (server === undefined) throw new Error('no cluster in the kubeconfig')
  const url = new URL(server.replace(/\/$/, '') + path)
  for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value))
  return url
}

/** For a KubeConfig whose cluster needs no TLS settings and that kubeconfig.ts did not prepare: one pool per server. */
const plainDispatchers = new Map<string, NodeDispatcher>()

/**
 * The headers and dispatcher client-node would send this request with: its authentication applied,
 * and the rate limit waited for (request-rate.ts hooks the same call).
 */
export async function authenticatedRequest(kc: KubeConfig, url: URL, method: ApiMethod, headers: Record<string, string>): Promise<{headers: Record<string, string>; dispatcher: RequestDispatcher}> {
  const context = new RequestContext(url.toString(), METHODS[method])
  for (const [name, value] of Object.entries(headers)) context.setHeaderParam(name, value)
  await kc.applySecurityAuthentication(context)
  let dispatcher = context.getDispatcher() as unknown as RequestDispatcher | undefined
  if (dispatcher === undefined) {
    if (!plainDispatchers.has(url.origin)) plainDispatchers.set(url.origin, new NodeDispatcher(url.origin))
    dispatcher = plainDispatchers.get(url.origin)
  }
  return {headers: context.getHeaders(), dispatcher: dispatcher!}
}

/** A failure's body: the Status object the API server sends, or the text a proxy sent in its place. */
function decode(text: string): unknown {
  if (text.length === 0) return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

/**
 * A 2xx answer that is not what the API server sends: not JSON (an auth proxy's `200 text/html` login
 * page, which must not read as "no Lease"), or larger than {@link MAX_ANSWER_BYTES}. Says what came.
 */
export class ApiAnswerError extends Error {
  override readonly name = 'ApiAnswerError'
}

/**
 * The largest answer read. The largest ironpool asks for are an OpenAPI v3 document of one API group
 * (IronCore's compute group: under 1 MiB; core/v1, which ironpool never reads, ~3 MiB) and a page of
 * 500 pools (~1 MiB): 32 MiB is ten times either, and an eighth of a poollet's 256 Mi memory limit, so
 * a runaway answer fails the request instead of the process.
 */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024

/** application/json, or a structured +json type (merge patch, apply patch), with parameters or not. */
function isJson(contentType: unknown): boolean {
  return typeof contentType === 'string' && /^application\/(?:[\w.-]+\+)?json(?:\s*;.*)?$/i.test(contentType.trim())
}

/**
 * What Go's content sniffing calls JSON written without a Content-Type: kube-apiserver serves its
 * OpenAPI v3 index (/openapi/v3) as `text/plain; charset=utf-8`. Taken only if the body parses.
 */
function isSniffedText(contentType: unknown): boolean {
  return contentType === undefined || (typeof contentType === 'string' && /^text\/plain(?:\s*;.*)?$/i.test(contentType.trim()))
}

/** The decoded JSON of a 2xx answer; an ApiAnswerError naming the content-type when it is not JSON. */
function decodeSuccess(what: string, code: number, contentType: unknown, text: string): unknown {
  if (text.length === 0) return undefined
  const shown = typeof contentType === 'string' ? contentType : 'none'
  if (!isJson(contentType) && !isSniffedText(contentType)) throw new ApiAnswerError(`${what}: HTTP ${code} answer is not JSON (content-type ${shown})`)
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    throw new ApiAnswerError(`${what}: HTTP ${code} answer (content-type ${shown}) is not valid JSON: ${(error as Error).message}`)
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])
const MAX_REDIRECTS = 5

/** Sends the request; resolves to the decoded JSON of a 2xx answer, rejects with ApiStatusError for any other. */
export async function apiRequest<T = unknown>(kc: KubeConfig, request: ApiRequest): Promise<T> {
  let url = apiUrl(kc, request.path, request.query)
  const payload = request.body === undefined ? undefined : JSON.stringify(request.body)
  const wanted: Record<string, string> = {Accept: 'application/json'}
  if (payload !== undefined) wanted['Content-Type'] = request.contentType ?? 'application/json'
  const signal = deadlineSignal(request.timeoutMs, request.signal)
  for (let redirects = 0; ; redirects++) {
    const {headers, dispatcher} = await authenticatedRequest(kc, url, request.method, wanted)
    const response = await dispatcher.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: request.method,
      headers,
      body: payload,
      signal,
      headersTimeout: request.timeoutMs,
      bodyTimeout: request.timeoutMs,
    })
    const what = `${request.method} ${url.pathname}`
    const text = await readText(response.body, MAX_ANSWER_BYTES).catch((error: unknown) => {
      throw error instanceof AnswerTooLargeError ? new ApiAnswerError(`${what}: ${error.message}`) : error
    })
    // A read the server moved (e.g. an OpenAPI document whose hash changed since the index was read:
    // 301 to the current one) is followed, as fetch and client-go do, on the same server only: the
    // credentials go nowhere else.
    const location = response.headers.location
    if (request.method === 'GET' && REDIRECTS.has(response.statusCode) && typeof location === 'string' && redirects < MAX_REDIRECTS) {
      const next = new URL(location, url)
      if (next.origin === url.origin) {
        url = next
        continue
      }
    }
    if (response.statusCode < 200 || response.statusCode > 299) throw new ApiStatusError(response.statusCode, decode(text))
    return decodeSuccess(what, response.statusCode, response.headers['content-type'], text) as T
  }
}
