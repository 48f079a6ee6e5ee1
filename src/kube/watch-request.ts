/**
 * One watch request, read without client-node's Watch. Its Watch turns undici's response into a web
 * stream, back into a Node stream (Readable.fromWeb), then into lines through readline, and resets a
 * timer per chunk; at the controller's rates that machinery is paid per Lease event, since each event
 * arrives alone. Here the request goes to the same undici dispatcher client-node would use (same TLS
 * identity, same reused connections: kubeconfig.ts), with the same headers (its authentication: token,
 * certificates, exec and auth plugins), and the body's bytes are split on newlines and JSON.parse'd.
 * undici's own headers and body timeouts stand for client-node's inactivity timer.
 * Figures: `npm run bench:lease-stream` (bench/README.md, issue 12).
 *
 * Only the decoding is replaced: when client-node would send the request without a dispatcher of its
 * own (a cluster reached without TLS settings or a proxy), the request goes through its Watch as before.
 */
import {STATUS_CODES} from 'node:http'
import type {KubeConfig} from '@kubernetes/client-node'
import {HttpMethod, RequestContext, Watch} from './client-node.ts'
import type {WatchCallbacks} from './list-watch-source.ts'

/** The part of undici's Dispatcher used here (client-node's dispatchers are undici Agents). */
interface RequestDispatcher {
  request(options: {
    origin: string
    path: string
    method: 'GET'
    headers: Record<string, string>
    signal: AbortSignal
    headersTimeout: number
    bodyTimeout: number
  }): Promise<{statusCode: number; body: NodeJS.ReadableStream & {destroy(error?: Error): void}}>
}

export interface WatchRequest {
  /** The resource's path under the cluster's server, e.g. /apis/coordination.k8s.io/v1/namespaces/x/leases. */
  path: string
  /** Query parameters (watch=true is added); undefined ones are left out. */
  query: Record<string, string | number | boolean | undefined>
  /** Ends the stream when no byte arrives for this long (and bounds the wait for the answer). */
  inactivityTimeoutMs: number
}

/** The URL client-node's Watch would request. */
function watchUrl(kc: KubeConfig, request: WatchRequest): URL {
  const cluster = kc.getCurrentCluster()
  if (cluster === null) throw new Error('No currently active cluster')
  const url = new URL(cluster.server + request.path)
  url.searchParams.set('watch', 'true')
  for (const [key, value] of Object.entries(request.query)) if (value !== undefined) url.searchParams.set(key, String(value))
  return url
}

/** Splits a byte stream into lines without decoding bytes twice; a line may span chunks. */
export class LineSplitter {
  private pending: Buffer[] = []
  private readonly onLine: (line: string) => void

  constructor(onLine: (line: string) => void) {
    this.onLine = onLine
  }

  push(chunk: Buffer): void {
    let start = 0
    let newline = chunk.indexOf(10)
    while (newline !== -1) {
      let line: string
      if (this.pending.length > 0) {
        this.pending.push(chunk.subarray(start, newline))
        line = Buffer.concat(this.pending).toString('utf8')
        this.pending = []
      } else {
        line = chunk.toString('utf8', start, newline)
      }
      if (line.length > 0) this.onLine(line)
      start = newline + 1
      newline = chunk.indexOf(10, start)
    }
    // Copied: a slice would keep the whole chunk alive until the line ends.
    if (start < chunk.length) this.pending.push(Buffer.from(chunk.subarray(start)))
  }
}

/**
 * Opens the watch. Resolves once the server answered (or failed, done() then called already) with the
 * means to end it, as client-node's Watch does: a non-200 answer is an Error with its statusCode.
 */
export async function openWatch(kc: KubeConfig, request: WatchRequest, callbacks: WatchCallbacks): Promise<{abort(): void}> {
  const url = watchUrl(kc, request)
  const context = new RequestContext(url.toString(), HttpMethod.GET)
  await kc.applySecurityAuthentication(context)
  const dispatcher = context.getDispatcher() as unknown as RequestDispatcher | undefined
  if (dispatcher === undefined) return watchWithClientNode(kc, request, callbacks)

  const controller = new AbortController()
  let ended = false
  const end = (error: unknown) => {
    if (ended) return
    ended = true
    controller.abort()
    callbacks.done(error)
  }
  const handle = {abort: () => controller.abort()}
  let response: Awaited<ReturnType<RequestDispatcher['request']>>
  try {
    response = await dispatcher.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: 'GET',
      headers: context.getHeaders(),
      signal: controller.signal,
      headersTimeout: request.inactivityTimeoutMs,
      bodyTimeout: request.inactivityTimeoutMs,
    })
  } catch (error) {
    end(error)
    return handle
  }
  const {statusCode, body} = response
  if (statusCode !== 200) {
    body.destroy()
    end(Object.assign(new Error(STATUS_CODES[statusCode] ?? 'Internal Server Error'), {statusCode}))
    return handle
  }
  const lines = new LineSplitter((line) => {
    let event: {type?: unknown; object?: unknown}
    try {
      event = JSON.parse(line) as {type?: unknown; object?: unknown}
    } catch {
      // As client-node's Watch: a line that is not JSON is skipped.
      return
    }
    callbacks.event(String(event.type), event.object)
  })
  body.on('data', (chunk: Buffer) => {
    if (!ended) lines.push(chunk)
  })
  body.once('end', () => end(null))
  body.once('error', (error: unknown) => end(error))
  body.once('close', () => end(null))
  return handle
}

/** The watch as client-node runs it, for a cluster it reaches without a dispatcher of its own. */
async function watchWithClientNode(kc: KubeConfig, request: WatchRequest, callbacks: WatchCallbacks): Promise<{abort(): void}> {
  const watcher = new Watch(kc)
  // requestTimeoutMs is private in client-node's types but a plain field at run time (2.0.1).
  ;(watcher as unknown as {requestTimeoutMs: number}).requestTimeoutMs = request.inactivityTimeoutMs
  const controller = await watcher.watch(
    request.path,
    request.query,
    (type, object) => callbacks.event(type, object as unknown),
    (error) => callbacks.done(error),
  )
  return {abort: () => controller.abort()}
}
