/**
 * The fault tests' proxy against real servers on loopback: a TCP echo server, and an HTTPS server for
 * TLS termination. "Nothing arrives" can only be seen over a while: those checks watch for QUIET_MS,
 * which makes them pass, never fail, on a machine too busy to forward in time.
 */
import {once} from 'node:events'
import https from 'node:https'
import net from 'node:net'
import type {AddressInfo} from 'node:net'
import {expect} from 'chai'
import {createCertificateAuthority} from '../../../src/controlplane/pki.ts'
import {seededRandom} from '../../support/seeded-random.ts'
import {TcpProxy} from '../../support/tcp-proxy.ts'
import {waitFor} from '../../support/wait.ts'

const QUIET_MS = 300

/** A client connection that collects what it receives, and whether it was closed. */
class Client {
  readonly socket: net.Socket
  received = ''
  closed = false

  private constructor(socket: net.Socket) {
    this.socket = socket
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (this.received += chunk))
    socket.on('close', () => (this.closed = true))
    socket.on('error', () => {})
  }

  static async connect(port: number): Promise<Client> {
    const socket = net.connect(port, '127.0.0.1')
    await once(socket, 'connect')
    return new Client(socket)
  }

  async expectEcho(text: string): Promise<void> {
    const before = this.received.length
    this.socket.write(text)
    await waitFor(`echo of ${text}`, () => this.received.slice(before).includes(text), {timeoutMs: 5_000, intervalMs: 5})
  }
}

async function quietly<T>(read: () => T): Promise<T> {
  await new Promise((resolve) => setTimeout(resolve, QUIET_MS))
  return read()
}

describe('TcpProxy (test support, real sockets)', () => {
  let echo: net.Server
  let proxy: TcpProxy
  const clients: Client[] = []

  beforeEach(async () => {
    echo = net.createServer((socket) => {
      socket.on('error', () => {})
      socket.pipe(socket)
    })
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve))
    proxy = new TcpProxy({target: {host: '127.0.0.1', port: (echo.address() as AddressInfo).port}})
    await proxy.start()
  })

  afterEach(async () => {
    for (const c of clients.splice(0)) c.socket.destroy()
    await proxy.close()
    echo.close()
  })

  const connect = async () => {
    const client = await Client.connect(proxy.port)
    clients.push(client)
    return client
  }

  it('forwards both ways', async () => {
    const client = await connect()
    await client.expectEcho('hello')
    await client.expectEcho('again')
    expect(proxy.openConnections).to.equal(1)
  })

  it('stall() holds bytes both ways without closing, and heal() delivers them in order', async () => {
    const client = await connect()
    await client.expectEcho('before')
    proxy.stall()
    client.socket.write('during-1 ')
    client.socket.write('during-2')
    expect(await quietly(() => client.received)).to.equal('before')
    expect(client.closed).to.be.false
    proxy.heal()
    await waitFor('the held bytes', () => client.received === 'beforeduring-1 during-2', {timeoutMs: 5_000})
    await client.expectEcho('after')
    expect(client.closed).to.be.false
  })

  it('stall() also holds connections opened while it lasts', async () => {
    proxy.stall()
    const client = await connect()
    client.socket.write('new')
    expect(await quietly(() => client.received)).to.equal('')
    proxy.heal()
    await waitFor('the held bytes', () => client.received === 'new', {timeoutMs: 5_000})
  })

  it('holdNewConnections() holds a new connection while an established one keeps flowing', async () => {
    const old = await connect()
    await old.expectEcho('old')
    proxy.holdNewConnections()
    const fresh = await connect()
    fresh.socket.write('fresh')
    await old.expectEcho('still')
    expect(await quietly(() => fresh.received)).to.equal('')
    proxy.heal()
    await waitFor('the held connection answered', () => fresh.received === 'fresh', {timeoutMs: 5_000})
  })

  it('blackhole() discards bytes until heal(), without closing', async () => {
    const client = await connect()
    proxy.blackhole()
    client.socket.write('lost')
    expect(await quietly(() => client.received)).to.equal('')
    proxy.heal()
    await client.expectEcho('found')
    expect(client.received).to.equal('found')
    expect(client.closed).to.be.false
  })

  it('passes a close on only when the link heals, as across a partition', async () => {
    const client = await connect()
    await client.expectEcho('x')
    proxy.stall()
    client.socket.destroy()
    await waitFor('the client side closed', () => client.closed)
    expect(await quietly(() => proxy.openConnections)).to.equal(1)
    proxy.heal()
    await waitFor('the link gone', () => proxy.openConnections === 0, {timeoutMs: 5_000})
  })

  it('close() ends every connection', async () => {
    const client = await connect()
    await client.expectEcho('x')
    await proxy.close()
    await waitFor('the client closed', () => client.closed, {timeoutMs: 5_000})
    proxy = new TcpProxy({target: {host: '127.0.0.1', port: 1}})
    await proxy.start()
  })

  describe('with TLS termination', () => {
    let server: https.Server
    let tlsProxy: TcpProxy
    let proxyCa: string
    let proxyTls: NonNullable<ConstructorParameters<typeof TcpProxy>[0]['tls']>
    /** Requests the server handled, by path. */
    let handled: string[]

    beforeEach(async () => {
      handled = []
      const upstreamCa = await createCertificateAuthority('upstream-ca')
      const serving = await upstreamCa.issue({commonName: 'upstream', usage: 'server', ipAddresses: ['127.0.0.1']})
      server = https.createServer({cert: serving.certPem, key: serving.keyPem}, (request, response) => {
        handled.push(String(request.url))
        if (request.url?.startsWith('/busy')) {
          response.statusCode = 429
          return void response.end('too many requests')
        }
        if (!request.url?.startsWith('/stream')) return void response.end(`answer to ${request.url}`)
        // A watch: one event per chunk, forever.
        let n = 0
        const timer = setInterval(() => response.write(`event-${++n}\n`), 10)
        response.on('close', () => clearInterval(timer))
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const ca = await createCertificateAuthority('proxy-ca')
      proxyCa = ca.certPem
      proxyTls = {server: await ca.issue({commonName: 'proxy', usage: 'server', ipAddresses: ['127.0.0.1']}), upstream: {caPem: upstreamCa.certPem}}
      tlsProxy = new TcpProxy({target: {host: '127.0.0.1', port: (server.address() as AddressInfo).port}, tls: proxyTls})
      await tlsProxy.start()
    })

    const lossyProxies: TcpProxy[] = []
    afterEach(async () => {
      for (const proxy of lossyProxies.splice(0)) await proxy.close()
      await tlsProxy.close()
      server.closeAllConnections()
      server.close()
    })

    /** One GET on its own connection; resolves with the body, or undefined when it got no answer in time. */
    const get = (path: string, timeoutMs = 5_000) =>
      new Promise<string | undefined>((resolve, reject) => {
        const request = https.get({host: '127.0.0.1', port: tlsProxy.port, path, ca: proxyCa, agent: false}, (response) => {
          let body = ''
          response.setEncoding('utf8')
          response.on('data', (chunk: string) => (body += chunk))
          response.on('end', () => resolve(body))
        })
        request.setTimeout(timeoutMs, () => {
          request.destroy()
          resolve(undefined)
        })
        request.on('error', reject)
      })

    it('forwards requests and records their request lines, also after a body on a kept-alive connection', async () => {
      expect(await get('/apis/x?limit=500')).to.equal('answer to /apis/x?limit=500')
      const agent = new https.Agent({keepAlive: true, ca: proxyCa})
      try {
        for (const path of ['/put/1', '/put/2']) {
          await new Promise<void>((resolve, reject) => {
            const request = https.request({host: '127.0.0.1', port: tlsProxy.port, path, method: 'PUT', agent, headers: {'content-type': 'application/json'}}, (response) => {
              response.resume()
              response.on('end', resolve)
            })
            request.on('error', reject)
            request.end('{"spec":{}}')
          })
        }
      } finally {
        agent.destroy()
      }
      expect(tlsProxy.requests).to.deep.equal(['GET /apis/x?limit=500 HTTP/1.1', 'PUT /put/1 HTTP/1.1', 'PUT /put/2 HTTP/1.1'])
      expect(tlsProxy.accepted).to.equal(2)
    })

    it('stalls only the requests that match, until heal()', async () => {
      tlsProxy.stallRequests(/^GET \/apis\/coordination\.k8s\.io\/v1\/namespaces\/[^/]+\/leases\?/)
      const list = get('/apis/coordination.k8s.io/v1/namespaces/ns/leases?limit=500', 20_000)
      expect(await get('/apis/coordination.k8s.io/v1/namespaces/ns/leases/one')).to.equal('answer to /apis/coordination.k8s.io/v1/namespaces/ns/leases/one')
      let listed: string | undefined
      void list.then((body) => (listed = body))
      expect(await quietly(() => listed)).to.equal(undefined)
      tlsProxy.heal()
      expect(await list).to.equal('answer to /apis/coordination.k8s.io/v1/namespaces/ns/leases?limit=500')
    })

    it('ends a streamed (chunked) response cleanly at a chunk boundary, as a server ends a watch', async () => {
      let received = ''
      const ended = new Promise<'end' | 'error'>((resolve) => {
        https.get({host: '127.0.0.1', port: tlsProxy.port, path: '/stream?watch=true', ca: proxyCa, agent: false}, (response) => {
          response.setEncoding('utf8')
          response.on('data', (chunk: string) => (received += chunk))
          response.on('end', () => resolve('end'))
          response.on('error', () => resolve('error'))
        }).on('error', () => resolve('error'))
      })
      await waitFor('the first events', () => received.includes('event-2'), {timeoutMs: 5_000})
      expect(tlsProxy.endResponses(/watch=true/)).to.equal(1)
      expect(await ended).to.equal('end')
      expect(received).to.match(/^(event-\d+\n)+$/)
    })

    it('resets the connections whose last request matches', async () => {
      const agent = new https.Agent({keepAlive: true, ca: proxyCa})
      try {
        const body = await new Promise<string>((resolve, reject) => {
          https.get({host: '127.0.0.1', port: tlsProxy.port, path: '/watch?watch=true', agent}, (response) => {
            response.resume()
            response.on('end', () => resolve('done'))
          }).on('error', reject)
        })
        expect(body).to.equal('done')
        await waitFor('the kept-alive connection', () => tlsProxy.openConnections === 1)
        expect(tlsProxy.resetRequests(/watch=true/)).to.equal(1)
        expect(tlsProxy.resetRequests(/other/)).to.equal(0)
        await waitFor('the connection gone', () => tlsProxy.openConnections === 0, {timeoutMs: 5_000})
      } finally {
        agent.destroy()
      }
    })

    describe('a lossy link', () => {
      const lossy = async (seed: number) => {
        const proxy = new TcpProxy({target: {host: '127.0.0.1', port: (server.address() as AddressInfo).port}, tls: proxyTls, lossy: {seed}})
        await proxy.start()
        lossyProxies.push(proxy)
        return proxy
      }

      /** Sends requests one after the other over keep-alive connections, as a client would; the outcome of each. */
      const run = async (proxy: TcpProxy, requests: {method: string; path: string}[]) => {
        const agent = new https.Agent({keepAlive: true, maxSockets: 1, ca: proxyCa})
        const outcomes: string[] = []
        try {
          for (const {method, path} of requests) {
            outcomes.push(
              await new Promise<string>((resolve) => {
                const request = https.request({host: '127.0.0.1', port: proxy.port, path, method, agent}, (response) => {
                  let body = ''
                  response.setEncoding('utf8')
                  response.on('data', (chunk: string) => (body += chunk))
                  response.on('end', () => resolve(`${response.statusCode} ${body}`))
                  response.on('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code ?? error.message}`))
                })
                request.setTimeout(10_000, () => request.destroy(new Error('timed out')))
                request.on('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code ?? error.message}`))
                request.end(method === 'PUT' ? '{"spec":{}}' : undefined)
              }),
            )
          }
        } finally {
          agent.destroy()
        }
        return outcomes
      }
      const gets = (n: number, prefix = '/get') => Array.from({length: n}, (_, i) => ({method: 'GET', path: `${prefix}/${i}`}))

      it('spoils the chosen share of requests: each one fails with a TLS error, every other one is answered', async () => {
        const proxy = await lossy(7)
        proxy.spoilRequests(0.1)
        const outcomes = await run(proxy, gets(200))
        const failed = outcomes.flatMap((o, i) => (o.startsWith('error') ? [i] : []))
        // About 20 of 200 (the seed fixes the count); a link that spoils nothing, or everything, fails here.
        expect(failed.length).to.be.within(8, 40)
        expect(proxy.spoiled).to.deep.equal(failed.map((i) => `GET /get/${i} HTTP/1.1`))
        // Not a reset or a close (which a client may resend): the client's TLS layer rejected a record.
        for (const i of failed) expect(outcomes[i]).to.match(/^error ERR_SSL_/)
        outcomes.forEach((o, i) => failed.includes(i) || expect(o).to.equal(`200 answer to /get/${i}`))
        // The server handled every request, the spoilt ones too: only their answers were garbled.
        expect(handled).to.have.length(200)
      })

      it('chooses the same requests for the same seed, others for another seed', async () => {
        const spoilt = async (seed: number) => {
          const proxy = await lossy(seed)
          proxy.spoilRequests(0.2)
          await run(proxy, gets(60))
          return proxy.spoiled
        }
        const first = await spoilt(42)
        expect(first).to.not.be.empty
        expect(await spoilt(42)).to.deep.equal(first)
        expect(await spoilt(43)).to.not.deep.equal(first)
        // The sequence itself: repeatable, in [0, 1).
        const a = seededRandom(5)
        const b = seededRandom(5)
        for (let i = 0; i < 100; i++) expect(a()).to.equal(b()).and.be.within(0, 1 - Number.EPSILON)
      })

      it('spoils only requests that match its pattern, writes too (they land), and stops on heal()', async () => {
        const proxy = await lossy(1)
        proxy.spoilRequests(1, /^PUT /)
        const outcomes = await run(proxy, [{method: 'GET', path: '/a'}, {method: 'PUT', path: '/w'}, {method: 'GET', path: '/b'}])
        expect(outcomes[0]).to.equal('200 answer to /a')
        expect(outcomes[1]).to.match(/^error ERR_SSL_/)
        expect(outcomes[2]).to.equal('200 answer to /b')
        expect(handled).to.include('/w')
        proxy.heal()
        expect(await run(proxy, [{method: 'PUT', path: '/w2'}])).to.deep.equal(['200 answer to /w2'])
        expect(proxy.spoiled).to.deep.equal(['PUT /w HTTP/1.1'])
      })

      it('counts the responses by status, 429s included', async () => {
        const proxy = await lossy(1)
        await run(proxy, [...gets(3), ...gets(2, '/busy')])
        expect(Object.fromEntries(proxy.statuses)).to.deep.equal({200: 3, 429: 2})
      })

      it('refuses to spoil without the lossy option, and a share outside 0..1', async () => {
        expect(() => tlsProxy.spoilRequests(0.1)).to.throw(/lossy/)
        const proxy = await lossy(1)
        expect(() => proxy.spoilRequests(1.5)).to.throw(/within 0..1/)
      })
    })
  })
})
