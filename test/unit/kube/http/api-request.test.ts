import {KubeConfig} from '@kubernetes/client-node'
import {expect} from 'chai'
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {ApiAnswerError, apiRequest, ApiStatusError, MAX_ANSWER_BYTES} from '../../../../src/kube/http/api-request.ts'
import {reuseConnections} from '../../../../src/kube/http/kubeconfig.ts'

interface Seen {
  path: string
  authorization: string | undefined
}

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<{server: Server; origin: string; seen: Seen[]}> {
  const seen: Seen[] = []
  const server = createServer((request, response) => {
    seen.push({path: request.url ?? '', authorization: request.headers.authorization})
    handler(request, response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen}
}

function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig()
  kc.loadFromOptions({
    clusters: [{name: 'c', server, skipTLSVerify: true}],
    users: [{name: 'u', token: 'secret-token'}],
    contexts: [{name: 'x', cluster: 'c', user: 'u'}],
    currentContext: 'x',
  })
  reuseConnections(kc)
  return kc
}

describe('apiRequest (a real HTTP server on loopback)', () => {
  const servers: Server[] = []
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('follows a read the server moved (an OpenAPI document whose hash changed), with the credentials, on the same server', async () => {
    const api = await serve((request, response) => {
      if (request.url?.startsWith('/openapi/v3/apis/g/v1?hash=OLD')) {
        response.writeHead(301, {Location: '/openapi/v3/apis/g/v1?hash=NEW'})
        response.end()
      } else {
        response.writeHead(200, {'Content-Type': 'application/json'})
        response.end('{"current":true}')
      }
    })
    servers.push(api.server)
    const body = await apiRequest(kubeConfigFor(api.origin), {method: 'GET', path: '/openapi/v3/apis/g/v1', query: {hash: 'OLD'}, timeoutMs: 5_000})
    expect(body).to.deep.equal({current: true})
    expect(api.seen).to.deep.equal([
      {path: '/openapi/v3/apis/g/v1?hash=OLD', authorization: 'Bearer secret-token'},
      {path: '/openapi/v3/apis/g/v1?hash=NEW', authorization: 'Bearer secret-token'},
    ])
  })

  it('does not follow a redirect to another server: the credentials stay, the answer is the 301', async () => {
    const elsewhere = await serve((_, response) => response.end('{}'))
    servers.push(elsewhere.server)
    const api = await serve((_, response) => {
      response.writeHead(301, {Location: `${elsewhere.origin}/steal`})
      response.end('{"kind":"Status","message":"moved"}')
    })
    servers.push(api.server)
    const error = await apiRequest(kubeConfigFor(api.origin), {method: 'GET', path: '/x', timeoutMs: 5_000}).then(() => undefined, (e: unknown) => e)
    expect(error).to.be.instanceOf(ApiStatusError)
    expect((error as ApiStatusError).code).to.equal(301)
    expect(elsewhere.seen).to.deep.equal([])
  })

  it('a non-2xx answer is an ApiStatusError with the Status the server sent', async () => {
    const api = await serve((_, response) => {
      response.writeHead(409, {'Content-Type': 'application/json'})
      response.end('{"kind":"Status","reason":"Conflict","message":"the object has been modified"}')
    })
    servers.push(api.server)
    const error = await apiRequest(kubeConfigFor(api.origin), {method: 'PUT', path: '/x', body: {a: 1}, timeoutMs: 5_000}).then(() => undefined, (e: unknown) => e)
    expect(error).to.be.instanceOf(ApiStatusError)
    expect(error).to.deep.include({code: 409, message: 'the object has been modified'})
    expect((error as ApiStatusError).body).to.deep.include({reason: 'Conflict'})
  })

  const failure = async (promise: Promise<unknown>): Promise<Error> => {
    try {
      await promise
    } catch (error) {
      return error as Error
    }
    throw new Error('the request succeeded')
  }

  it('refuses a 2xx that is not JSON (an auth proxy’s 200 text/html login page), naming the content-type; takes application/json with parameters', async () => {
    let contentType = 'text/html; charset=utf-8'
    let body = '<html>please log in</html>'
    const api = await serve((_request, response) => {
      response.writeHead(200, {'Content-Type': contentType})
      response.end(body)
    })
    servers.push(api.server)
    const kc = kubeConfigFor(api.origin)
    const get = () => apiRequest(kc, {method: 'GET', path: '/apis/coordination.k8s.io/v1/namespaces/n/leases/p', timeoutMs: 5_000})
    let error = await failure(get())
    expect(error).to.be.instanceOf(ApiAnswerError)
    expect(error.message).to.equal('GET /apis/coordination.k8s.io/v1/namespaces/n/leases/p: HTTP 200 answer is not JSON (content-type text/html; charset=utf-8)')
    contentType = 'application/json'
    body = '{"kind": "Lease"' // cut short
    error = await failure(get())
    expect(error).to.be.instanceOf(ApiAnswerError)
    expect(error.message).to.match(/HTTP 200 answer \(content-type application\/json\) is not valid JSON/)
    contentType = 'application/json;charset=utf-8'
    body = '{"kind":"Lease"}'
    expect(await get()).to.deep.equal({kind: 'Lease'})
    // kube-apiserver's OpenAPI v3 index comes as text/plain (Go's sniffing of JSON written without a type): taken if it parses.
    contentType = 'text/plain; charset=utf-8'
    expect(await get()).to.deep.equal({kind: 'Lease'})
    body = 'please log in'
    error = await failure(get())
    expect(error).to.be.instanceOf(ApiAnswerError)
    expect(error.message).to.match(/HTTP 200 answer \(content-type text\/plain; charset=utf-8\) is not valid JSON/)
  })

  it(`refuses an answer larger than ${MAX_ANSWER_BYTES / 2 ** 20} MiB without reading it all, and the next request works`, async () => {
    let huge = true
    let written = 0
    const api = await serve((_request, response) => {
      response.writeHead(200, {'Content-Type': 'application/json'})
      if (!huge) return response.end('{}')
      const chunk = Buffer.alloc(1024 * 1024, 0x20)
      const more = () => {
        while (written < 2 * MAX_ANSWER_BYTES) {
          written += chunk.length
          if (!response.write(chunk)) return void response.once('drain', more)
        }
        response.end()
      }
      response.on('error', () => {})
      more()
    })
    servers.push(api.server)
    const kc = kubeConfigFor(api.origin)
    const error = await failure(apiRequest(kc, {method: 'GET', path: '/openapi/v3/apis/g/v1', timeoutMs: 10_000}))
    expect(error).to.be.instanceOf(ApiAnswerError)
    expect(error.message).to.equal(`GET /openapi/v3/apis/g/v1: answer larger than ${MAX_ANSWER_BYTES} bytes`)
    expect(written).to.be.below(2 * MAX_ANSWER_BYTES)
    huge = false
    expect(await apiRequest(kc, {method: 'GET', path: '/x', timeoutMs: 5_000})).to.deep.equal({})
  })
})
