/**
 * Unary gRPC calls on node:http2 directly: the poollet's runtime probe, once a heartbeat, over a
 * unix socket. One HTTP/2 session, dialled when a call needs it and again after it ends; each call
 * one stream with its deadline on the wire (grpc-timeout) and enforced here; the status from the
 * trailers, or from the headers of a trailers-only answer.
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

  /** One unary call: the request message's bytes out, the answer's message bytes back. */
  call(path: string, request: Uint8Array, options: CallOptions): Promise<Uint8Array> {
    const {signal, timeoutMs} = options
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
        if (error === undefined) resolve(message!)
        else reject(error)
      }
      const onAbort = () => finish(aborted())
      const onSessionError = (error: Error) => finish(new ClientError(path, Status.UNAVAILABLE, error.message))
      const timer = setTimeout(() => {
        finish(new ClientError(path, Status.DEADLINE_EXCEEDED, `no answer within ${timeoutMs} ms`))
        // No answer may mean no peer (a runtime frozen, or replaced on the same socket path while
        // this session still points at the old one): the next call dials afresh, the kubelet's
        // answer to a heartbeat that got none.
        this.drop(session)
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
        return finish(new ClientError(path, Status.UNAVAILABLE, (error as Error).message))
      }
      this.readAnswer(path, stream, finish)
      const frame = Buffer.alloc(5 + request.length)
      frame.writeUInt32BE(request.length, 1)
      frame.set(request, 5)
      stream.end(frame)
    })
  }

  /** Reads one unary answer from stream and calls finish with its message or its error. */
  private readAnswer(path: string, stream: ClientHttp2Stream, finish: (error: Error | undefined, message?: Uint8Array) => void): void {
    let httpStatus = 0
    let status: Status | undefined
    let details = ''
    const chunks: Buffer[] = []
    let received = 0
    const takeStatus = (headers: IncomingHttpHeaders) => {
      const code = headers['grpc-status']
      if (code === undefined) return
      status = Number(code)
      details = decodeMessage(headers['grpc-message'])
    }
    stream.on('response', (headers) => {
      httpStatus = Number(headers[constants.HTTP2_HEADER_STATUS])
      takeStatus(headers) // a trailers-only answer
    })
    stream.on('trailers', takeStatus)
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length
      if (received > MAX_RECEIVE_BYTES) return finish(new ClientError(path, Status.RESOURCE_EXHAUSTED, `answer larger than ${MAX_RECEIVE_BYTES} bytes`))
      chunks.push(chunk)
    })
    // A failed dial cancels the pending stream with the dial's error as its cause: that is the news.
    stream.on('error', (error: Error) => finish(new ClientError(path, Status.UNAVAILABLE, error.cause instanceof Error ? error.cause.message : error.message)))
    stream.on('close', () => {
      if (httpStatus !== 200 && status === undefined) return finish(new ClientError(path, httpStatus === 0 ? Status.UNAVAILABLE : statusOfHttp(httpStatus), httpStatus === 0 ? `stream closed (code ${stream.rstCode})` : `HTTP status ${httpStatus}`))
      if (status === undefined) return finish(new ClientError(path, Status.UNKNOWN, 'the answer had no grpc-status'))
      if (status !== Status.OK) return finish(new ClientError(path, status, details))
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
   * Retires session if it is the current one, so that the next call dials a new one. Closed, not
   * destroyed: the cancelled stream's RST_STREAM still goes out, so a live runtime learns the call ended.
   */
  private drop(session: ClientHttp2Session): void {
    if (this.session !== session) return
    this.session = undefined
    session.close()
  }

  /** Ends the session; later calls fail UNAVAILABLE without dialling. */
  close(): void {
    this.closed = true
    this.session?.destroy()
    this.session = undefined
  }
}
