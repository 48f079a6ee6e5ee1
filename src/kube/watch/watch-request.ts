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
import {fieldsOf, metadataOf} from './json-extent.ts'

/** A watch event too large to take, named from its first bytes (issue 29). */
export interface OversizedEvent {
  type?: string
  name?: string
  namespace?: string
  resourceVersion?: string
  /** The event's size on the wire, bytes. */
  bytes: number
  /** The cap it is over, bytes. */
  limitBytes: number
}

/** What a watch stream calls: the contract openWatch() keeps, and every Watcher with it. */
export interface WatchCallbacks {
  /** One decoded watch event: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR (object is then a Status). */
  event(type: string, object: unknown): void
  /** The stream ended: null when it closed cleanly, else the error. Called at most once. */
  done(error: unknown): void
  /** An event larger than the request's maxEventBytes, neither buffered whole nor parsed. */
  oversized?(event: OversizedEvent): void
}

export interface WatchRequest {
  /** The resource's path under the cluster's server, e.g. /apis/coordination.k8s.io/v1/namespaces/x/leases. */
  path: string
  /** Query parameters (watch=true is added); undefined ones are left out. */
  query: Record<string, string | number | boolean | undefined>
  /** Ends the stream when no byte arrives for this long (and bounds the wait for the answer). */
  inactivityTimeoutMs: number
  /** An event line longer than this is not parsed but reported by oversized(). Default: no limit. */
  maxEventBytes?: number
}

/** What an oversized line keeps of itself: its first bytes, enough for its type and the object's metadata. */
export const OVERSIZED_HEAD_BYTES = 64 * 1024

/**
 * Splits a byte stream into lines without decoding bytes twice; a line may span chunks. A line longer
 * than maxLineBytes is never held whole: its first {@link OVERSIZED_HEAD_BYTES} are kept, the rest
 * only counted, and onOversized hears its head and length instead of onLine.
 */
export class LineSplitter {
  private pending: Buffer[] = []
  private pendingBytes = 0
  /** The current line is past the limit: pending holds its head, dropped counts the rest. */
  private overflowing = false
  private dropped = 0
  private readonly onLine: (line: string) => void
  private readonly maxLineBytes: number
  private readonly onOversized: (head: string, bytes: number) => void

  constructor(onLine: (line: string) => void, limit: {maxLineBytes?: number; onOversized?: (head: string, bytes: number) => void} = {}) {
    this.onLine = onLine
    this.maxLineBytes = limit.maxLineBytes ?? Infinity
    this.onOversized = limit.onOversized ?? (() => {})
  }

  push(chunk: Buffer): void {
    let start = 0
    let newline = chunk.indexOf(10)
    while (newline !== -1) {
      if (this.overflowing || this.pendingBytes + newline - start > this.maxLineBytes) {
        this.keep(chunk.subarray(start, newline))
        this.oversized()
      } else if (this.pending.length > 0) {
        this.pending.push(chunk.subarray(start, newline))
        const line = Buffer.concat(this.pending).toString('utf8')
        this.reset()
        if (line.length > 0) this.onLine(line)
      } else if (newline > start) {
        this.onLine(chunk.toString('utf8', start, newline))
      }
      start = newline + 1
      newline = chunk.indexOf(10, start)
    }
    if (start < chunk.length) this.keep(chunk.subarray(start))
  }

  /** Holds the part of a line not ended yet: whole within the limit, else its head only. */
  private keep(part: Buffer): void {
    if (!this.overflowing && this.pendingBytes + part.length <= this.maxLineBytes) {
      // Copied: a slice would keep the whole chunk alive until the line ends.
      this.pending.push(Buffer.from(part))
      this.pendingBytes += part.length
      return
    }
    if (!this.overflowing) {
      this.overflowing = true
      const all = Buffer.concat([...this.pending, part])
      const head = Buffer.from(all.subarray(0, OVERSIZED_HEAD_BYTES))
      this.pending = [head]
      this.pendingBytes = head.length
      this.dropped = all.length - head.length
      return
    }
    const taken = Math.min(part.length, Math.max(0, OVERSIZED_HEAD_BYTES - this.pendingBytes))
    if (taken > 0) this.pending.push(Buffer.from(part.subarray(0, taken)))
    this.pendingBytes += taken
    this.dropped += part.length - taken
  }

  private oversized(): void {
    const head = Buffer.concat(this.pending).toString('utf8')
    const bytes = this.pendingBytes + this.dropped
    this.reset()
    this.onOversized(head, bytes)
  }

  private reset(): void {
    this.pending = []
    this.pendingBytes = 0
    this.overflowing = false
    this.dropped = 0
  }
}

/** An oversized event named from its first bytes: `{"type":"MODIFIED","object":{... "metadata":{"name":...`. */
export function oversizedEvent(head: string, bytes: number, limitBytes: number): OversizedEvent {
  const fields = fieldsOf(head, 0)
  const type = fields.get('type')
  const object = fields.get('object')
  const meta = typeof object === 'object' ? metadataOf(head, object.at) : {}
  return {type: typeof type === 'string' ? type : undefined, ...meta, bytes, limitBytes}
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
  const maxLineBytes = request.maxEventBytes
  const lines = new LineSplitter(
    (line) => {
      let event: {type?: unknown; object?: unknown}
      try {
        event = JSON.parse(line) as {type?: unknown; object?: unknown}
      } catch {
        // As client-node's Watch: a line that is not JSON is skipped.
        return
      }
      callbacks.event(String(event.type), event.object)
    },
    {maxLineBytes, onOversized: (head, bytes) => callbacks.oversized?.(oversizedEvent(head, bytes, maxLineBytes ?? Infinity))},
  )
  body.on('data', (chunk: Buffer) => {
    if (!ended) lines.push(chunk)
  })
  body.once('end', () => end(null))
  body.once('error', (error: unknown) => end(error))
  body.once('close', () => end(null))
  return handle
}
