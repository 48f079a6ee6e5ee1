/**
 * Unary gRPC calls on node:http2 directly: the poollet's runtime probe, once a heartbeat, over a
 * unix socket. One HTTP/2 session, dialled when a call needs it and again after it ends; each call
 * one stream with its deadline on the wire (grpc-timeout) and enforced here. An answer is judged as
 * the protocol says and grpc-go judges it: HTTP status 200 first, then an application/grpc
 * content-type, then the status from the trailers (from the headers only of a trailers-only answer);
 * a malformed grpc-status is an error naming it. A call that gets no answer destroys its session
 * (a frozen runtime never answers the close); a stream refused unprocessed after a GOAWAY is sent
 * once more on a fresh session, as grpc-go and grpc-js do.
 *
 * Why not nice-grpc on grpc-js, which the test runtime still serves with: grpc-js's channel stack
 * (resolver, load balancer, subchannels, filters, call machinery) cost about 1.1 ms of CPU per probe,
 * this 0.6 ms, in the same paced loop against the same runtime (bench/README.md, issue 12); and
 * grpc-js with protobufjs is 0.6 MB of code in every poollet. A unary call without TLS, compression
 * or load balancing is what the gRPC HTTP/2 protocol spells out in a page
 * (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md); that page is what this follows.
 *
 * Errors are nice-grpc's ClientError (path, status, details), so callers read them as they would
 * nice-grpc's; an abort by the caller's signal is an AbortError.
 */
import {AbortError} from 'abort-controller-x'
import {ClientError, Status} from 'nice-grpc-common'
import {connect as connectSocket} from 'node:net'
import {connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders} from 'node:http2'
import {formatDuration} from '../core/index.ts'
import {grpcTimeout} from './wire-deadline.ts'

/** The largest answer read (grpc-js's default receive limit); a larger one fails RESOURCE_EXHAUSTED. */
const MAX_RECEIVE_BYTES = 4 * 1024 * 1024

/** Where to dial: a unix socket path, or a TCP host and port. */
export type Target = {path: string} | {host: string; port: number}

/**
 * The dial target of a gRPC endpoint as normaliseEndpoint() leaves it: `unix:///abs`, `unix:rel`,
 * `unix:/abs`, `dns:///host:port`, `host:port`. Throws on any other, naming it.
 */
export function parseTarget(endpoint: string): Target {
  if (endpoint.startsWith('unix://')) return {path: endpoint.slice('unix://'.length)}
  if (endpoint.startsWith('unix:')) return {path: endpoint.slice('unix:'.length)}
  const hostPort = endpoint.replace(/^dns:(?:\/\/[^/]*\/)?/, '')
  const match = /^(\[[^\]]+\]|[^:/[\]]+):(\d{1,5})$/.exec(hostPort)
  if (match === null) throw new Error(`IRI runtime endpoint ${endpoint}: want unix:///path/to.sock (or host:port)`)
  return {host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2])}
}

/** An HTTP status other than 200 as a gRPC status, as the protocol's HTTP-to-gRPC mapping says. */
function statusOfHttp(code: number): Status {
  if (code === 400) return Status.INTERNAL
  if (code === 401) return Status.UNAUTHENTICATED
  if (code === 403) return Status.PERMISSION_DENIED
  if (code === 404) return Status.UNIMPLEMENTED
  if (code === 429 || code === 502 || code === 503 || code === 504) return Status.UNAVAILABLE
  return Status.UNKNOWN
}

/** grpc-message is percent-encoded UTF-8. */
function decodeMessage(value: unknown): string {
  const text = typeof value === 'string' ? value : ''
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** What an abort by the caller rejects with: abort-controller-x's AbortError, as nice-grpc's calls do. */
function aborted(): Error {
  return new AbortError()
}

export interface CallOptions {
  /** The whole call must end within this. */
  timeoutMs: number
  /** Aborting it cancels the call (RST_STREAM CANCEL) and rejects with an AbortError. */
  signal: AbortSignal
}

/** A stream the server refused unprocessed (RST_STREAM REFUSED_STREAM, as after its GOAWAY): safe to send again. */
class Refused extends Error {}

/** The grpc-status codes there are (0 OK to 16 UNAUTHENTICATED); another number is read as UNKNOWN, naming it. */
const HIGHEST_STATUS: number = Status.UNAUTHENTICATED

/**
 * A grpc-status value as the error it means, undefined for OK, or an error naming a malformed one
 * (grpc-go: "malformed grpc-status", INTERNAL): never NaN, never a code that has no name. OK makes no
 * error object: a ClientError formats its stack when made (ts-error's ExtendableError), and through
 * ironpool's source-mapped stacks that was the dearest part of a healthy probe.
 */
function statusError(path: string, value: string | string[] | undefined, message: unknown): ClientError | undefined {
  const text = Array.isArray(value) ? value.join(',') : String(value)
  if (text === '0') return undefined
  if (!/^\d{1,10}$/.test(text)) return new ClientError(path, Status.INTERNAL, `malformed grpc-status ${JSON.stringify(text)}`)
  const code = Number(text)
  const details = decodeMessage(message)
  if (code > HIGHEST_STATUS) return new ClientError(path, Status.UNKNOWN, `grpc-status ${code}${details === '' ? '' : `: ${details}`}`)
  // A zero written otherwise ("00"): OK all the same.
  if (code === 0) return undefined
  return new ClientError(path, code, details)
}

/** application/grpc, alone or with a suffix (+proto, +json) or parameters, as the protocol spells it. */
function isGrpcContentType(value: unknown): boolean {
  return typeof value === 'string' && /^application\/grpc(?:[+;].*)?$/i.test(value.trim())
}

export class UnaryChannel {
  private session: ClientHttp2Session | undefined
  private closed = false
  private inFlight = 0
  private readonly target: Target
  private readonly authority: string

  constructor(endpoint: string) {
    this.target = parseTarget(endpoint)
    this.authority = 'path' in this.target ? 'localhost' : `${this.target.host}:${this.target.port}`
  }

  /**
   * One unary call: the request message's bytes out, the answer's message bytes back. A stream the
   * server refused unprocessed (REFUSED_STREAM: a GOAWAY crossed the call on the wire) is sent once
   * more on a fresh session within the same deadline, as grpc-go and grpc-js retry it transparently.
   */
  async call(path: string, request: Uint8Array, options: CallOptions): Promise<Uint8Array> {
    const deadline = performance.now() + options.timeoutMs
    try {
      return await this.attempt(path, request, options.signal, options.timeoutMs)
    } catch (error) {
      if (!(error instanceof Refused)) throw error
      const left = deadline - performance.now()
      if (left <= 0) throw new ClientError(path, Status.DEADLINE_EXCEEDED, `no answer within ${formatDuration(options.timeoutMs)}`)
      try {
        return await this.attempt(path, request, options.signal, left)
      } catch (again) {
        if (again instanceof Refused) throw new ClientError(path, Status.UNAVAILABLE, again.message)
        throw again
      }
    }
  }

  /** One stream of a call; rejects with Refused when the server refused it unprocessed. */
  private attempt(path: string, request: Uint8Array, signal: AbortSignal, timeoutMs: number): Promise<Uint8Array> {
    if (signal.aborted) return Promise.reject(aborted())
    if (this.closed) return Promise.reject(new ClientError(path, Status.UNAVAILABLE, 'the channel is closed'))
    return new Promise<Uint8Array>((resolve, reject) => {
      const session = this.openSession()
      this.inFlight++
      session.ref()
      let stream: ClientHttp2Stream | undefined
      let settled = false
      const finish = (error: Error | undefined, message?: Uint8Array) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        session.removeListener('error', onSessionError)
        if (--this.inFlight === 0 && !session.destroyed) session.unref()
        if (stream !== undefined && !stream.closed) stream.close(constants.NGHTTP2_CANCEL)
        // The session that refused a stream is going away: the call's second try dials a fresh one.
        if (error instanceof Refused) this.retire(session, false)
        if (error === undefined) resolve(message!)
        else reject(error)
      }
      const onAbort = () => finish(aborted())
      const onSessionError = (error: Error) => finish(new ClientError(path, Status.UNAVAILABLE, error.message))
      const timer = setTimeout(() => {
        finish(new ClientError(path, Status.DEADLINE_EXCEEDED, `no answer within ${formatDuration(timeoutMs)}`))
        // No answer may mean no peer (a runtime frozen, or replaced on the same socket path while
        // this session still points at the old one): the next call dials afresh, the kubelet's
        // answer to a heartbeat that got none. Destroyed, not closed: close() waits for the peer,
        // and a frozen one never answers, so each heartbeat would leave a socket and a session open.
        this.retire(session, true)
      }, timeoutMs)
      signal.addEventListener('abort', onAbort, {once: true})
      // A dial that fails (no socket, refused) fails the session, not the stream.
      session.once('error', onSessionError)
      try {
        stream = session.request({
          [constants.HTTP2_HEADER_METHOD]: 'POST',
          [constants.HTTP2_HEADER_PATH]: path,
          [constants.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
          te: 'trailers',
          'grpc-timeout': grpcTimeout(timeoutMs),
        })
      } catch (error) {
        // A session that is going away (its GOAWAY came in since openSession): a stream it never sent.
        if ((error as NodeJS.ErrnoException).code === 'ERR_HTTP2_GOAWAY_SESSION') return finish(new Refused((error as Error).message))
        return finish(new ClientError(path, Status.UNAVAILABLE, (error as Error).message))
      }
      this.readAnswer(path, stream, finish)
      const frame = Buffer.alloc(5 + request.length)
      frame.writeUInt32BE(request.length, 1)
      frame.set(request, 5)
      stream.end(frame)
    })
  }

  /**
   * Reads one unary answer from stream and calls finish with its message or its error, judged as the
   * gRPC protocol says: HTTP status 200 first, then an application/grpc content-type, then the status
   * from the trailers (from the headers only when they end the stream: a trailers-only answer).
   */
  private readAnswer(path: string, stream: ClientHttp2Stream, finish: (error: Error | undefined, message?: Uint8Array) => void): void {
    let answered = false
    /** The answer's status once read: OK, or the error it means. */
    let status: {error: ClientError | undefined} | undefined
    const chunks: Buffer[] = []
    let received = 0
    stream.on('response', (headers: IncomingHttpHeaders, flags: number) => {
      answered = true
      const httpStatus = Number(headers[constants.HTTP2_HEADER_STATUS])
      if (httpStatus !== 200) return finish(new ClientError(path, statusOfHttp(httpStatus), `HTTP status ${httpStatus}`))
      const contentType = headers[constants.HTTP2_HEADER_CONTENT_TYPE]
      if (!isGrpcContentType(contentType)) return finish(new ClientError(path, Status.UNKNOWN, contentType === undefined ? 'the answer had no content-type' : `unexpected content-type ${JSON.stringify(contentType)}`))
      // A trailers-only answer: these headers end the stream and carry the status.
      if ((flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0 && headers['grpc-status'] !== undefined) status = {error: statusError(path, headers['grpc-status'], headers['grpc-message'])}
    })
    stream.on('trailers', (headers: IncomingHttpHeaders) => {
      if (headers['grpc-status'] !== undefined) status = {error: statusError(path, headers['grpc-status'], headers['grpc-message'])}
    })
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length
      if (received > MAX_RECEIVE_BYTES) return finish(new ClientError(path, Status.RESOURCE_EXHAUSTED, `answer larger than ${MAX_RECEIVE_BYTES} bytes`))
      chunks.push(chunk)
    })
    // A failed dial cancels the pending stream with the dial's error as its cause: that is the news.
    // A stream refused unprocessed (REFUSED_STREAM, the server going away) may be sent again.
    stream.on('error', (error: Error) => {
      if (!answered && stream.rstCode === constants.NGHTTP2_REFUSED_STREAM) return finish(new Refused(`stream refused by the server (REFUSED_STREAM)`))
      finish(new ClientError(path, Status.UNAVAILABLE, error.cause instanceof Error ? error.cause.message : error.message))
    })
    stream.on('close', () => {
      if (!answered && stream.rstCode === constants.NGHTTP2_REFUSED_STREAM) return finish(new Refused(`stream refused by the server (REFUSED_STREAM)`))
      if (!answered) return finish(new ClientError(path, Status.UNAVAILABLE, `stream closed (code ${stream.rstCode})`))
      if (status === undefined) return finish(new ClientError(path, Status.UNKNOWN, 'the answer had no grpc-status in its trailers'))
      if (status.error !== undefined) return finish(status.error)
      const body = Buffer.concat(chunks)
      if (body.length < 5) return finish(new ClientError(path, Status.INTERNAL, 'the answer had no message'))
      if (body[0] !== 0) return finish(new ClientError(path, Status.INTERNAL, 'the answer is compressed, which was not asked for'))
      const length = body.readUInt32BE(1)
      if (body.length < 5 + length) return finish(new ClientError(path, Status.INTERNAL, 'the answer ended inside its message'))
      finish(undefined, body.subarray(5, 5 + length))
    })
  }

  /** The session calls go on: the open one, else a new dial. */
  private openSession(): ClientHttp2Session {
    const current = this.session
    if (current !== undefined && !current.closed && !current.destroyed) return current
    const target = this.target
    const session = connect(`http://${this.authority}`, {createConnection: () => ('path' in target ? connectSocket(target.path) : connectSocket(target.port, target.host))})
    // Errors reach the calls in flight (their own listeners); this one keeps an unheard error from
    // becoming an uncaught exception, and a session that failed is dialled afresh next time.
    session.on('error', () => {})
    const forget = () => {
      if (this.session === session) this.session = undefined
    }
    session.once('close', forget)
    session.once('goaway', forget)
    session.unref()
    this.session = session
    return session
  }

  /**
   * Retires session so that the next call dials a new one: destroyed at once when it went silent
   * (its socket's fd is freed now, whatever the peer does), else closed (calls in flight end first).
   */
  private retire(session: ClientHttp2Session, silent: boolean): void {
    if (this.session === session) this.session = undefined
    if (silent) session.destroy()
    else session.close()
  }

  /** Ends the session; later calls fail UNAVAILABLE without dialling. */
  close(): void {
    this.closed = true
    this.session?.destroy()
    this.session = undefined
  }
}
