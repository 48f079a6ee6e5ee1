import {expect} from 'chai'
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'
import {NodeDispatcher, readText, SilenceError} from '../../../../src/kube/http/node-dispatcher.ts'
import {waitFor} from '../../../support/wait.ts'

type Handler = (request: IncomingMessage, response: ServerResponse) => void

describe('NodeDispatcher (real sockets on loopback)', () => {
  let server: Server
  let origin: string
  let handler: Handler
  const sockets = new Set<Socket>()
  let dispatcher: NodeDispatcher

  beforeEach(async () => {
    handler = (_, response) => response.end('{"ok":true}')
    sockets.clear()
    server = createServer((request, response) => handler(request, response))
    server.on('connection', (socket) => sockets.add(socket))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    dispatcher = new NodeDispatcher(origin)
  })
  afterEach(async () => {
    await dispatcher.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  /** The server answers 200, writes one line and keeps the response open for the test to write more. */
  function openStream(): {response: ServerResponse | undefined} {
    const stream: {response: ServerResponse | undefined} = {response: undefined}
    handler = (_, response) => {
      response.writeHead(200)
      response.write('a\n')
      stream.response = response
    }
    return stream
  }

  const get = (options: {signal?: AbortSignal; headersTimeout?: number; bodyTimeout?: number; method?: string; body?: string} = {}) =>
    dispatcher.request({
      origin,
      path: '/x',
      method: options.method ?? 'GET',
      headers: {Accept: 'application/json'},
      body: options.body,
      signal: options.signal ?? new AbortController().signal,
      headersTimeout: options.headersTimeout ?? 5_000,
      bodyTimeout: options.bodyTimeout ?? 5_000,
    })

  it('sends one keep-alive connection for requests one after another, with no timeout listener left behind per use', async () => {
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.name)
    process.on('warning', onWarning)
    try {
      for (let i = 0; i < 25; i++) {
        const response = await get()
        expect(response.statusCode).to.equal(200)
        expect(await readText(response.body)).to.equal('{"ok":true}')
      }
    } finally {
      process.off('warning', onWarning)
    }
    expect(sockets.size, 'connections opened').to.equal(1)
    expect(warnings, 'MaxListenersExceededWarning and the like').to.deep.equal([])
  })

  it('sends a read again, once, on a fresh connection when the kept-alive one was closed under it; not a write', async () => {
    // The keep-alive race, made certain: the server drops the connection at the second request on it.
    const seen = new Map<Socket, number>()
    handler = (request, response) => {
      const n = (seen.get(request.socket) ?? 0) + 1
      seen.set(request.socket, n)
      if (n === 2) return request.socket.destroy()
      response.end(`{"method":"${request.method}"}`)
    }
    await readText((await get()).body)
    expect(await readText((await get()).body)).to.equal('{"method":"GET"}')
    expect(sockets.size, 'the retry dialled a second connection').to.equal(2)
    await readText((await get()).body) // the second connection's second request: dropped, retried on a third
    expect(sockets.size).to.equal(3)
    const write = await get({method: 'PUT', body: '{}'}).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect((write as NodeJS.ErrnoException | undefined)?.code, 'a write on a dropped connection is not sent again').to.equal('ECONNRESET')
  })

  it('sends the body with its length', async () => {
    let received = ''
    handler = (request, response) => {
      request.setEncoding('utf8')
      request.on('data', (chunk: string) => (received += chunk))
      request.on('end', () => response.end(`{"length":${request.headers['content-length']}}`))
    }
    const response = await get({method: 'PUT', body: '{"spec":"ü"}'})
    expect(JSON.parse(await readText(response.body))).to.deep.equal({length: Buffer.byteLength('{"spec":"ü"}')})
    expect(received).to.equal('{"spec":"ü"}')
  })

  it('readText: the whole body, a multi-byte character split across chunks included; refuses a body past its limit and one cut short', async () => {
    const text = '{"spec":"ü"}'
    const bytes = Buffer.from(text)
    const split = bytes.indexOf(0xc3) + 1 // inside ü's two bytes
    handler = (_, response) => {
      response.writeHead(200, {'Content-Length': bytes.length})
      response.write(bytes.subarray(0, split))
      setImmediate(() => response.end(bytes.subarray(split)))
    }
    expect(await readText((await get()).body)).to.equal(text)
    expect(await readText((await get()).body, 4).then(() => 'read', (e: Error) => e.name)).to.equal('AnswerTooLargeError')
    // A body whose connection ends before its Content-Length is reached fails; it never reads as whole.
    handler = (_, response) => {
      response.writeHead(200, {'Content-Length': 100})
      response.write('{"half":')
      setImmediate(() => response.socket?.destroy())
    }
    const cut = await readText((await get()).body).then((t) => `read ${t}`, (e: Error) => e.message)
    expect(cut).to.not.match(/^read/)
  })

  it('ends an exchange whose answer does not come within the headers timeout', async () => {
    handler = () => {} // never answers
    const error = await get({headersTimeout: 200}).then(() => undefined, (e: unknown) => e)
    expect(error).to.be.instanceOf(SilenceError)
  })

  it('keeps a body open while bytes keep coming faster than the body timeout (a watch), and ends it when they stop', async () => {
    const stream = openStream()
    const answer = await get({bodyTimeout: 1_000})
    const chunks: string[] = []
    let ended: unknown
    answer.body.on('data', (chunk: Buffer) => chunks.push(chunk.toString()))
    answer.body.on('error', (error) => (ended = error))
    // Six bytes 250 ms apart: 1.5 s in all, longer than the timeout, no gap near it (room for a busy machine).
    for (let i = 0; i < 6; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      stream.response?.write(`${i}\n`)
    }
    await waitFor('every chunk', () => chunks.join('').split('\n').length >= 8, {timeoutMs: 5_000})
    expect(ended, 'ended while bytes kept coming').to.equal(undefined)
    await waitFor('the silent body ended', () => ended !== undefined, {timeoutMs: 5_000})
    expect(ended).to.be.instanceOf(SilenceError)
  })

  it('rejects with the reason of the signal that aborted it', async () => {
    handler = () => {}
    const controller = new AbortController()
    const pending = get({signal: controller.signal})
    const reason = new Error('leadership lost')
    setTimeout(() => controller.abort(reason), 50)
    const error = await pending.then(() => undefined, (e: unknown) => e)
    expect(error).to.equal(reason)
  })

  it('close() refuses new requests and lets an open stream run on; destroy() ends it', async () => {
    const stream = openStream()
    const answer = await get()
    let ended = false
    let received = ''
    answer.body.on('close', () => (ended = true))
    answer.body.on('data', (chunk: Buffer) => (received += chunk.toString()))
    await dispatcher.close()
    expect(dispatcher.closed).to.equal(true)
    const refused = await get().then(() => undefined, (e: unknown) => e)
    expect(String(refused)).to.match(/closed/)
    stream.response?.write('b\n')
    await waitFor('a byte written after close() to arrive', () => received.includes('b'), {timeoutMs: 5_000})
    expect(ended, 'the stream open at close() runs on').to.equal(false)
    await dispatcher.destroy()
    await waitFor('the stream ended by destroy()', () => ended, {timeoutMs: 5_000})
  })
})
