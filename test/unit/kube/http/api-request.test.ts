import {KubeConfig} from '@kubernetes/client-node'
import {expect} from 'chai'
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {apiRequest, ApiStatusError} from '../../../../src/kube/http/api-request.ts'
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
      } else response.end('{"current":true}')
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
})
