/**
 * UnaryChannel against a real HTTP/2 server on a unix socket that answers each call as the test says:
 * the gRPC protocol's corners that the test runtime (a correct grpc-js server) never shows.
 */
import {isAbortError} from 'abort-controller-x'
import {expect} from 'chai'
import {ClientError, Status} from 'nice-grpc-common'
import {mkdtemp, rm} from 'node:fs/promises'
import {constants, createServer, type Http2Server, type ServerHttp2Stream} from 'node:http2'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {parseTarget, UnaryChannel} from '../../../src/iri/unary-channel.ts'
import {waitFor} from '../../support/wait.ts'

const PATH = '/test.v1.Runtime/Probe'
const ok = {timeoutMs: 2000, signal: new AbortController().signal}

/** A gRPC frame: the uncompressed flag (or the given one), the length, the bytes. */
function frame(message: Uint8Array, flag = 0): Buffer {
  const out = Buffer.alloc(5 + message.length)
  out[0] = flag
  out.writeUInt32BE(message.length, 1)
  out.set(message, 5)
  return out
}

type Answer = (stream: ServerHttp2Stream, request: Buffer) => void

describe('UnaryChannel: unary gRPC on node:http2 against a real server on a unix socket', () => {
  let dir: string
  let socket: string
  let server: Http2Server
  let answer: Answer
  let sessions = 0
  let closedSessions = 0
  let received: {path: string; headers: Record<string, unknown>; body: Buffer}[] = []
  let channel: UnaryChannel
  let refuse: (stream: ServerHttp2Stream) => boolean = () => false

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ironpool-unary-'))
    socket = path.join(dir, 'runtime.sock')
    sessions = 0
    closedSessions = 0
    received = []
    refuse = () => false
    answer = (stream) => {
      stream.respond({':status': 200, 'content-type': 'application/grpc'}, {waitForTrailers: true})
      stream.on('wantTrailers', () => stream.sendTrailers({'grpc-status': '0'}))
      stream.end(frame(Buffer.from([8, 1])))
    }
    server = createServer()
    server.on('session', (session) => {
      sessions++
      session.on('close', () => closedSessions++)
    })
    server.on('stream', (stream, headers) => {
      stream.on('error', () => {})
      if (refuse(stream)) return stream.close(constants.NGHTTP2_REFUSED_STREAM)
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        const body = Buffer.concat(chunks)
        received.push({path: String(headers[':path']), headers: {...headers}, body})
        answer(stream, body)
      })
      stream.on('error', () => {})
    })
    await new Promise<void>((resolve) => server.listen(socket, resolve))
    channel = new UnaryChannel(`unix://${socket}`)
  })

  afterEach(async () => {
    channel.close()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await rm(dir, {recursive: true, force: true})
  })

  const failure = async (promise: Promise<unknown>): Promise<ClientError> => {
    try {
      await promise
    } catch (error) {
      expect(error).to.be.instanceOf(ClientError)
      return error as ClientError
    }
    throw new Error('the call succeeded')
  }

  it('sends the request framed, with the gRPC headers and the deadline, and returns the answer’s message bytes undecoded', async () => {
    const garbage = Buffer.from([0x0a, 0x05, 0x01]) // a field announcing 5 bytes and bringing one
    answer = (stream) => {
      stream.respond({':status': 200, 'content-type': 'application/grpc'}, {waitForTrailers: true})
      stream.on('wantTrailers', () => stream.sendTrailers({'grpc-status': '0'}))
      stream.end(frame(garbage))
    }
    const message = await channel.call(PATH, Buffer.from([1, 2, 3]), {timeoutMs: 1500, signal: new AbortController().signal})
    expect(Buffer.from(message).equals(garbage)).to.be.true
    expect(received).to.have.length(1)
    expect(received[0]?.path).to.equal(PATH)
    expect(received[0]?.headers).to.include({':method': 'POST', 'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': '1500m'})
    expect(received[0]?.body.equals(frame(Buffer.from([1, 2, 3])))).to.be.true
  })

  it('makes every call on one session while it lasts', async () => {
    for (let i = 0; i < 5; i++) await channel.call(PATH, new Uint8Array(), ok)
    expect(received).to.have.length(5)
    expect(sessions).to.equal(1)
  })

  it('reads a trailers-only failure: its status and its percent-decoded message', async () => {
    answer = (stream) => stream.respond({':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(Status.RESOURCE_EXHAUSTED), 'grpc-message': 'pool%20is%20full%3A%20100%25'}, {endStream: true})
    const error = await failure(channel.call(PATH, new Uint8Array(), ok))
    expect(error.code).to.equal(Status.RESOURCE_EXHAUSTED)
    expect(error.details).to.equal('pool is full: 100%')
    expect(error.path).to.equal(PATH)
  })

  it('maps an HTTP status other than 200 (a proxy, not a gRPC server) as the protocol says: 404 is UNIMPLEMENTED, 503 UNAVAILABLE', async () => {
    answer = (stream) => stream.respond({':status': 404}, {endStream: true})
    expect((await failure(channel.call(PATH, new Uint8Array(), ok))).code).to.equal(Status.UNIMPLEMENTED)
    answer = (stream) => stream.respond({':status': 503}, {endStream: true})
    const error = await failure(channel.call(PATH, new Uint8Array(), ok))
    expect(error.code).to.equal(Status.UNAVAILABLE)
    expect(error.details).to.equal('HTTP status 503')
  })

  it('fails an OK without a message, a compressed message it did not ask for, and an answer with no grpc-status', async () => {
    const respond = (body: Buffer | undefined, trailers: Record<string, string>) => (stream: ServerHttp2Stream) => {
      stream.respond({':status': 200, 'content-type': 'application/grpc'}, {waitForTrailers: true})
      stream.on('wantTrailers', () => stream.sendTrailers(trailers))
      stream.end(body)
    }
    answer = respond(undefined, {'grpc-status': '0'})
    expect((await failure(channel.call(PATH, new Uint8Array(), ok))).details).to.equal('the answer had no message')
    answer = respond(frame(Buffer.from([1]), 1), {'grpc-status': '0'})
    expect((await failure(channel.call(PATH, new Uint8Array(), ok))).code).to.equal(Status.INTERNAL)
    answer = respond(frame(Buffer.from([1])).subarray(0, 5), {'grpc-status': '0'}) // announces 1 byte, brings none
    expect((await failure(channel.call(PATH, new Uint8Array(), ok))).details).to.equal('the answer ended inside its message')
    answer = respond(frame(Buffer.from([1])), {})
    const error = await failure(channel.call(PATH, new Uint8Array(), ok))
    expect(error.code).to.equal(Status.UNKNOWN)
    expect(error.details).to.equal('the answer had no grpc-status in its trailers')
  })

  it('refuses an answer above 4 MiB with RESOURCE_EXHAUSTED, and the next call works', async () => {
    const big = answer
    answer = (stream) => {
      stream.respond({':status': 200, 'content-type': 'application/grpc'})
      stream.end(frame(Buffer.alloc(4 * 1024 * 1024 + 1)))
    }
    expect((await failure(channel.call(PATH, new Uint8Array(), ok))).code).to.equal(Status.RESOURCE_EXHAUSTED)
    answer = big
    await channel.call(PATH, new Uint8Array(), ok)
  })

  it('takes the status from the trailers, not from headers that do not end the stream: grpc-status 0 there and empty trailers is no answer', async () => {
    answer = (stream) => {
      stream.respond({':status': 200, 'content-type': 'application/grpc', 'grpc-status': '0'}, {waitForTrailers: true})
      stream.on('wantTrailers', () => stream.sendTrailers({}))
      stream.end(frame(Buffer.from([8, 1])))
    }
    const error = await failure(channel.call(PATH, new Uint8Array(), ok))
    expect(error.code).to.equal(Status.UNKNOWN)
    expect(error.details).to.equal('the answer had no grpc-status in its trailers')
  })

  it('judges the HTTP status first: 500 with grpc-status 0 and a message is a failure, UNKNOWN, naming the HTTP status', async () => {
    answer = (stream) => {
      stream.respond({':status': 500, 'content-type': 'application/grpc', 'grpc-status': '0'}, {waitForTrailers: true})
      stream.on('wantTrailers', () => stream.sendTrailers({'grpc-status': '0'}))
      stream.end(frame(Buffer.from([8, 1])))
    }
    const error = await failure(channel.call(PATH, new Uint8Array(), ok))
    expect(error.code).to.equal(Status.UNKNOWN)
    expect(error.details).to.equal('HTTP status 500')
  })

  it('refuses a 200 that is not application/grpc (a proxy’s text/html page), naming the content-type; takes application/grpc+proto', async () => {
    answer = (stream) => {
      stream.respond({':status': 200, 'content-type': 'text/html; charset=utf-8'}, {waitForTrailers: true})
      stream.on('wantTrailers', () => stream.sendTrailers({'grpc-status': '0'}))
      stream.end(frame(Buffer.from('<html>')))
    }
    const error = await failure(channel.call(PATH, new Uint8Array(), ok))
    expect(error.code).to.equal(Status.UNKNOWN)
    expect(error.details).to.equal('unexpected content-type "text/html; charset=utf-8"')
    answer = (stream) => {
      stream.respond({':status': 200, 'content-type': 'application/grpc+proto'}, {waitForTrailers: true})
      stream.on('wantTrailers', () => stream.sendTrailers({'grpc-status': '0'}))
      stream.end(frame(Buffer.from([8, 1])))
    }
    expect(Buffer.from(await channel.call(PATH, new Uint8Array(), ok)).equals(Buffer.from([8, 1]))).to.be.true
  })

  it('fails a malformed grpc-status as INTERNAL, naming it, and an unknown code as UNKNOWN, naming the number', async () => {
    answer = (stream) => stream.respond({':status': 200, 'content-type': 'application/grpc', 'grpc-status': 'OK', 'grpc-message': 'fine'}, {endStream: true})
    let error = await failure(channel.call(PATH, new Uint8Array(), ok))
    expect(error.code).to.equal(Status.INTERNAL)
    expect(error.details).to.equal('malformed grpc-status "OK"')
    answer = (stream) => stream.respond({':status': 200, 'content-type': 'application/grpc', 'grpc-status': '99', 'grpc-message': 'odd'}, {endStream: true})
    error = await failure(channel.call(PATH, new Uint8Array(), ok))
    expect(error.code).to.equal(Status.UNKNOWN)
    expect(error.details).to.equal('grpc-status 99: odd')
  })

  it('answers 200 back-to-back calls against a server that sends GOAWAY after each answer: the stream it refuses is sent again on a fresh session', async () => {
    // The GOAWAY reaches the client only after its next call went out on the same session (as on a
    // real wire, where the two cross): the server refuses that stream, unprocessed, and says so.
    const answered = new WeakSet<object>()
    refuse = (stream) => {
      const session = stream.session!
      if (!answered.has(session)) {
        answered.add(session)
        return false
      }
      session.goaway(constants.NGHTTP2_NO_ERROR, stream.id! - 2)
      return true
    }
    let failed = 0
    for (let i = 0; i < 200; i++) await channel.call(PATH, new Uint8Array(), ok).catch(() => failed++)
    expect(failed).to.equal(0)
    expect(received).to.have.length(200)
    expect(sessions).to.equal(200)
  })

  it('sends a refused stream once more, and only once: a server refusing every stream fails the call UNAVAILABLE after two', async () => {
    let streams = 0
    refuse = () => {
      streams++
      return true
    }
    const error = await failure(channel.call(PATH, new Uint8Array(), ok))
    expect(error.code).to.equal(Status.UNAVAILABLE)
    expect(error.details).to.match(/REFUSED_STREAM/)
    expect(streams).to.equal(2)
    refuse = () => streams++ === 2 // the next call's first stream only
    await channel.call(PATH, new Uint8Array(), ok)
    expect(streams).to.equal(4)
  })

  it('ends a call that gets no answer at its deadline with DEADLINE_EXCEEDED, and ends its stream and its connection on the server', async () => {
    let cancelled: Promise<void> | undefined
    answer = (stream) => {
      cancelled = new Promise((resolve) => stream.on('close', () => resolve()))
    }
    const error = await failure(channel.call(PATH, new Uint8Array(), {timeoutMs: 200, signal: new AbortController().signal}))
    expect(error.code).to.equal(Status.DEADLINE_EXCEEDED)
    await cancelled
    // The session is destroyed, not closed: close() would wait for a peer that may never answer.
    await waitFor('the silent session closed on the server', () => closedSessions === 1, {timeoutMs: 5000})
  })

  it('dials a new session for the call after one that got no answer (a peer frozen or replaced on the same socket)', async () => {
    const silent = answer
    answer = () => {}
    expect((await failure(channel.call(PATH, new Uint8Array(), {timeoutMs: 200, signal: new AbortController().signal}))).code).to.equal(Status.DEADLINE_EXCEEDED)
    answer = silent
    await channel.call(PATH, new Uint8Array(), ok)
    expect(sessions).to.equal(2)
    // The retired session is gone, not left open beside the new one: a runtime frozen for hours
    // must not collect one connection per heartbeat.
    await waitFor('the retired session closed', () => closedSessions === 1, {timeoutMs: 5000})
  })

  it('ends a call at once when its signal aborts, with an AbortError, not a gRPC status', async () => {
    let arrived: () => void = () => {}
    const arrival = new Promise<void>((resolve) => (arrived = resolve))
    answer = () => arrived()
    const controller = new AbortController()
    const call = channel.call(PATH, new Uint8Array(), {timeoutMs: 60_000, signal: controller.signal})
    await arrival
    controller.abort()
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(isAbortError(error)).to.be.true
  })

  it('fails the calls of a session the server ends, UNAVAILABLE, and dials a new session for the next call', async () => {
    answer = (stream) => stream.session?.destroy()
    expect((await failure(channel.call(PATH, new Uint8Array(), ok))).code).to.equal(Status.UNAVAILABLE)
    answer = (stream) => stream.respond({':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(Status.NOT_FOUND)}, {endStream: true})
    expect((await failure(channel.call(PATH, new Uint8Array(), ok))).code).to.equal(Status.NOT_FOUND)
    expect(sessions).to.equal(2)
  })

  it('fails without dialling once closed', async () => {
    channel.close()
    const error = await failure(channel.call(PATH, new Uint8Array(), ok))
    expect(error.code).to.equal(Status.UNAVAILABLE)
    expect(error.details).to.equal('the channel is closed')
    expect(sessions).to.equal(0)
  })
})

describe('UnaryChannel targets', () => {
  it('reads unix sockets in the forms normaliseEndpoint leaves, and host:port', () => {
    expect(parseTarget('unix:///run/iri.sock')).to.deep.equal({path: '/run/iri.sock'})
    expect(parseTarget('unix:./iri.sock')).to.deep.equal({path: './iri.sock'})
    expect(parseTarget('unix:/run/iri.sock')).to.deep.equal({path: '/run/iri.sock'})
    expect(parseTarget('localhost:9000')).to.deep.equal({host: 'localhost', port: 9000})
    expect(parseTarget('dns:///runtime.local:9000')).to.deep.equal({host: 'runtime.local', port: 9000})
    expect(parseTarget('[::1]:9000')).to.deep.equal({host: '::1', port: 9000})
  })

  it('refuses any other target, naming it and the form it wants', () => {
    expect(() => parseTarget('xds:///runtime')).to.throw('IRI runtime endpoint xds:///runtime: want unix:///path/to.sock (or host:port)')
    expect(() => parseTarget('localhost')).to.throw(/want unix:/)
  })
})
