/**
 * The connection pool of one identity to one API server, on node:http(s) keep-alive agents. It stands
 * where client-node would put an undici Agent (kubeconfig.ts hands it out from createDispatcher), with
 * the one method src/kube calls, undici's request(): every request and watch of src/kube goes through
 * it. Why not undici: client-node's undici is a megabyte of code and a WebAssembly HTTP parser that
 * every process loaded before its first request (~10 MiB of an idle poollet's RSS, its start-up time
 * too), while Node's own HTTP stack is loaded anyway; a request costs the same CPU on either
 * (bench:poollet, bench:lease-stream; bench/README.md, issue 12). HTTP/1.1 with keep-alive: one
 * connection per request in flight, one per open watch.
 *
 * A proxied cluster (proxy-url) keeps client-node's undici ProxyAgent, loaded only then.
 */
import {Agent as HttpAgent, request as httpRequest, type IncomingMessage} from 'node:http'
import {Agent as HttpsAgent, request as httpsRequest} from 'node:https'
import type {Socket} from 'node:net'
import type {Readable} from 'node:stream'
import type {ConnectionOptions} from 'node:tls'

export interface DispatchOptions {
  origin: string
  path: string
  method: string
  headers: Record<string, string>
  body?: string
  signal: AbortSignal
  /** Ends the exchange when the answer's headers do not come within this. */
  headersTimeout: number
  /** Ends the exchange when the body stays silent for this long. */
  bodyTimeout: number
}

export interface DispatchResponse {
  statusCode: number
  headers: Record<string, string | string[] | undefined>
  body: Readable
}

/** What src/kube needs of a dispatcher: undici's Agent has this shape too (a proxied cluster's). */
export interface RequestDispatcher {
  request(options: DispatchOptions): Promise<DispatchResponse>
}

/** An exchange that went silent past its timeout. */
export class SilenceError extends Error {
  override readonly name = 'SilenceError'
}

/** An idle kept-alive connection is closed after this: below any API server's or load balancer's idle timeout. */
const IDLE_CONNECTION_MS = 30_000
/** TCP keep-alive's first probe, as client-go and client-node (30 s). */
const KEEP_ALIVE_INITIAL_DELAY_MS = 30_000

export class NodeDispatcher implements RequestDispatcher {
  /** True once close() or destroy() was called; the pool takes no new request then. */
  closed = false
  private readonly agent: HttpAgent
  private readonly secure: boolean
  /** Connections handed back and not in use: only these are closed when idle too long. */
  private readonly idle = new WeakSet<Socket>()
  /** Connections that have their idle-timeout listener. */
  private readonly watched = new WeakSet<Socket>()

  /** tls: the identity's TLS options (CA, client certificate and key, verification, server name). */
  constructor(server: string, tls: ConnectionOptions = {}) {
    this.secure = new URL(server).protocol === 'https:'
    const options = {keepAlive: true, keepAliveMsecs: KEEP_ALIVE_INITIAL_DELAY_MS, scheduling: 'lifo' as const}
    this.agent = this.secure ? new HttpsAgent({...options, ...tls}) : new HttpAgent(options)
    // A connection handed back stays open for the next request, but not forever. One listener per
    // socket, installed the first time it is free (socket.setTimeout's callback would add one per use).
    this.agent.on('free', (socket: Socket) => {
      if (this.closed) return socket.destroy()
      this.idle.add(socket)
      if (!this.watched.has(socket)) {
        this.watched.add(socket)
        socket.on('timeout', () => {
          if (this.idle.has(socket)) socket.destroy()
        })
      }
      socket.setTimeout(IDLE_CONNECTION_MS)
    })
  }

  request(options: DispatchOptions): Promise<DispatchResponse> {
    return new Promise((resolve, reject) => {
      const {signal} = options
      if (this.closed) return reject(new Error('the connection pool is closed'))
      if (signal.aborted) return reject(signal.reason as Error)
      const url = new URL(options.origin)
      const headers: Record<string, string | number> = {...options.headers}
      if (options.body !== undefined) headers['Content-Length'] = Buffer.byteLength(options.body)
      const send = this.secure ? httpsRequest : httpRequest
      const request = send({host: url.hostname, port: url.port, path: options.path, method: options.method, headers, agent: this.agent})
      let response: IncomingMessage | undefined
      let silence = `no answer within ${options.headersTimeout} ms`
      let release = () => {}
      const onAbort = () => {
        const reason = signal.reason as Error
        response?.destroy(reason)
        request.destroy(reason)
      }
      signal.addEventListener('abort', onAbort, {once: true})
      const done = () => {
        signal.removeEventListener('abort', onAbort)
        release()
      }
      // Silence is judged on the socket: its timeout restarts with every byte, which a watch needs.
      request.once('socket', (socket: Socket) => {
        this.idle.delete(socket)
        const onTimeout = () => (response ?? request).destroy(new SilenceError(silence))
        socket.setTimeout(options.headersTimeout)
        socket.on('timeout', onTimeout)
        release = () => socket.removeListener('timeout', onTimeout)
      })
      // Also after the answer came (a reset mid-body): the body reports that to its reader.
      request.on('error', (error) => {
        done()
        // A kept-alive connection the server (or a proxy) closed as it was handed out fails before any
        // answer: the keep-alive race. A read is sent again on another connection, as Go's
        // transport and Node's documentation (request.reusedSocket) do; writes are never sent again.
        if (response === undefined && request.reusedSocket && !signal.aborted && !this.closed && (options.method === 'GET' || options.method === 'HEAD') && isConnectionLost(error)) {
          this.request(options).then(resolve, reject)
          return
        }
        reject(error)
      })
      request.once('response', (answer: IncomingMessage) => {
        response = answer
        silence = `no byte for ${options.bodyTimeout} ms`
        answer.socket.setTimeout(options.bodyTimeout)
        answer.once('close', done)
        resolve({statusCode: answer.statusCode ?? 0, headers: answer.headers, body: answer})
      })
      request.end(options.body)
    })
  }

  /** Takes no new request; open connections end as their requests and watches finish. */
  async close(): Promise<void> {
    this.closed = true
    for (const sockets of Object.values(this.agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy()
    await Promise.resolve()
  }

  /** Ends every connection now, requests and watches in flight included (they fail; their owners retry). */
  async destroy(): Promise<void> {
    this.closed = true
    this.agent.destroy()
    await Promise.resolve()
  }
}

/** A connection that ended under a request: reset, or closed before the answer began. */
function isConnectionLost(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === 'ECONNRESET' || code === 'EPIPE'
}

/** An answer whose body went past the reader's limit; the body is destroyed, its connection with it. */
export class AnswerTooLargeError extends Error {
  override readonly name = 'AnswerTooLargeError'
}

/**
 * The whole body of an answer, as text; rejects with AnswerTooLargeError past limitBytes. Read by its
 * events rather than `for await`: an async iterator is several objects and promises a chunk, and this
 * runs for every request, the poollet's Lease write in each heartbeat among them.
 */
export function readText(body: Readable, limitBytes = Infinity): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let length = 0
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
      length += bytes.length
      if (length > limitBytes) {
        body.off('data', onData)
        body.destroy()
        reject(new AnswerTooLargeError(`answer larger than ${limitBytes} bytes`))
        return
      }
      chunks.push(bytes)
    }
    body.on('data', onData)
    body.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    body.once('error', reject)
    // Ended without its end (the connection closed mid-body with no error of its own): as `for await` says it.
    body.once('close', () => {
      if (!body.readableEnded) reject(Object.assign(new Error('Premature close'), {code: 'ERR_STREAM_PREMATURE_CLOSE'}))
    })
  })
}
