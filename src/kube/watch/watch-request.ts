/**
 * One watch request, read without client-node's Watch. Its Watch turns the fetch response into a web
 * stream, back into a Node stream (Readable.fromWeb), then into lines through readline, and resets a
 * timer per chunk; at the controller's rates that machinery is paid per Lease event, since each event
 * arrives alone. Here the request goes through the identity's connection pool (node-dispatcher.ts,
 * shared by kubeconfig.ts) with client-node's authentication (api-request.ts), and the body's bytes
 * are split on newlines and JSON.parse'd. The pool's headers and body timeouts stand for client-node's
 * inactivity timer. Figures: `npm run bench:lease-stream` (bench/README.md, issue 12).
 */
import {STATUS_CODES} from 'node:http'
import type {KubeConfig} from '@kubernetes/client-node'
import {apiUrl, authenticatedRequest} from '../http/api-request.ts'
import type {DispatchResponse} from '../http/node-dispatcher.ts'

/** What a watch stream calls: the contract openWatch() keeps, and every Watcher with it. */
export interface WatchCallbacks {
  /** One decoded watch event: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR (object is then a Status). */
  event(type: string, object: unknown): void
  /** The stream ended: null when it closed cleanly, else the error. Called at most once. */
  done(error: unknown): void
}

export interface WatchRequest {
  /** The resource's path under the cluster's server, e.g. /apis/coordination.k8s.io/v1/namespaces/x/leases. */
  path: string
  /** Query parameters (watch=true is added); undefined ones are left out. */
  query: Record<string, string | number | boolean | undefined>
  /** Ends the stream when no byte arrives for this long (and bounds the wait for the answer). */
  inactivityTimeoutMs: number
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
  const url = apiUrl(kc, request.path, {...request.query, watch: true})
  const {headers, dispatcher} = await authenticatedRequest(kc, url, 'GET', {Accept: 'application/json'})

  const controller = new AbortController()
  let ended = false
  const end = (error: unknown) => {
    if (ended) return
    ended = true
    controller.abort()
    callbacks.done(error)
  }
  const handle = {abort: () => controller.abort()}
  let response: DispatchResponse
  try {
    response = await dispatcher.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: 'GET',
      headers,
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
