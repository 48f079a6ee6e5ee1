import {expect} from 'chai'
import {Counter, Registry} from 'prom-client'
import {parseBindAddress, type BindAddress} from '../../../src/observe/bind-address.ts'
import type {HealthCheck} from '../../../src/observe/healthz.ts'
import {ObserveServer, observeServers, type ObserveServerOptions} from '../../../src/observe/http-server.ts'
import {FakeLogger} from '../../support/fake-logger.ts'

const LOOPBACK: BindAddress = {host: '127.0.0.1', port: 0}
const ok: HealthCheck = () => {}
const failing = (why: string): HealthCheck => () => {
  throw new Error(why)
}

/** A server on an ephemeral loopback port, stopped after the test. */
class Running {
  readonly server: ObserveServer
  readonly controller = new AbortController()
  readonly done: Promise<void>
  constructor(options: Omit<ObserveServerOptions, 'address'> & {address?: BindAddress}) {
    this.server = new ObserveServer({address: LOOPBACK, ...options})
    this.done = this.server.start(this.controller.signal)
  }
  async url(path: string): Promise<string> {
    await this.server.waitReady(this.controller.signal)
    return `http://127.0.0.1:${this.server.address()?.port}${path}`
  }
  async get(path: string): Promise<{status: number; body: string; type: string | null}> {
    const response = await fetch(await this.url(path))
    return {status: response.status, body: await response.text(), type: response.headers.get('content-type')}
  }
  async stop(): Promise<void> {
    this.controller.abort()
    await this.done
  }
}

describe('ObserveServer', () => {
  const running: Running[] = []
  const serve = (options: ConstructorParameters<typeof Running>[0]) => {
    const server = new Running(options)
    running.push(server)
    return server
  }
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.stop()))
  })

  it('is named after what it serves', () => {
    const names = [{metrics: new Registry()}, {readyz: new Map()}, {metrics: new Registry(), healthz: new Map()}].map((o) => new ObserveServer({address: LOOPBACK, ...o}).name)
    expect(names).to.deep.equal(['metrics', 'health-probes', 'metrics-and-probes'])
  })

  it('reports the ephemeral port it bound', async () => {
    const server = serve({healthz: new Map()})
    await server.server.waitReady(server.controller.signal)
    expect(server.server.address()?.port).to.be.a('number').above(0)
  })

  it('/healthz is 200 "ok" when every check passes', async () => {
    const server = serve({healthz: new Map([['loop', ok]]), readyz: new Map()})
    expect(await server.get('/healthz')).to.deep.include({status: 200, body: 'ok', type: 'text/plain; charset=utf-8'})
  })

  it('/readyz is 500 naming the failing check, reasons withheld, sorted', async () => {
    const server = serve({readyz: new Map([['watch-caches', failing('leases not synced')], ['leader', ok]])})
    const {status, body} = await server.get('/readyz')
    expect(status).to.equal(500)
    expect(body).to.equal('[+]leader ok\n[-]watch-caches failed: reason withheld\nreadyz check failed\n')
  })

  it('serves each check at its own path, with the reason when it fails', async () => {
    const checks = new Map([['leader', ok], ['watch-caches', failing('leases not synced')]])
    const server = serve({readyz: checks, healthz: checks})
    expect(await server.get('/readyz/leader')).to.deep.include({status: 200, body: 'ok'})
    expect(await server.get('/healthz/watch-caches')).to.deep.include({status: 500, body: 'internal server error: leases not synced\n'})
    expect(await server.get('/readyz/nope')).to.deep.include({status: 404})
  })

  it('?verbose lists every check, sorted, even when all pass', async () => {
    const server = serve({healthz: new Map([['zeta', ok], ['alpha', async () => {}]])})
    expect(await server.get('/healthz?verbose')).to.deep.include({status: 200, body: '[+]alpha ok\n[+]zeta ok\nhealthz check passed\n'})
  })

  it('?exclude leaves a check out and warns about names it does not know', async () => {
    const server = serve({readyz: new Map([['cache', failing('x')], ['leader', ok]])})
    expect(await server.get('/readyz?exclude=cache&exclude=ghost')).to.deep.include({status: 200, body: 'ok'})
    const {status, body} = await server.get('/readyz?exclude=cache&exclude=ghost&verbose')
    expect(status).to.equal(200)
    expect(body).to.equal('[+]cache excluded: ok\n[+]leader ok\nwarn: some health checks cannot be excluded: no matches for "ghost"\nreadyz check passed\n')
  })

  it('answers "ok" with no checks, and lists ping when verbose', async () => {
    const server = serve({healthz: new Map()})
    expect(await server.get('/healthz')).to.deep.include({status: 200, body: 'ok'})
    expect(await server.get('/healthz?verbose')).to.deep.include({body: '[+]ping ok\nhealthz check passed\n'})
  })

  it('serves a check added after it started', async () => {
    const checks = new Map<string, HealthCheck>()
    const server = serve({readyz: checks})
    expect((await server.get('/readyz')).status).to.equal(200)
    checks.set('late', failing('not yet'))
    expect((await server.get('/readyz')).status).to.equal(500)
  })

  it('logs the reason of a failing check', async () => {
    const logger = new FakeLogger()
    const server = serve({readyz: new Map([['cache', failing('relisting')]]), logger})
    await server.get('/readyz')
    expect(logger.at('info').map((e) => e.obj)).to.deep.include({endpoint: 'readyz', failed: {cache: 'relisting'}})
  })

  it('/metrics exposes the registry in the Prometheus text format', async () => {
    const registry = new Registry()
    new Counter({name: 'ironpool_test_total', help: 'test', registers: [registry]}).inc(3)
    const server = serve({metrics: registry})
    const {status, body, type} = await server.get('/metrics')
    expect(status).to.equal(200)
    expect(body).to.include('ironpool_test_total 3')
    expect(type).to.equal(registry.contentType)
  })

  it('answers 404 for what it does not serve', async () => {
    const server = serve({metrics: new Registry()})
    expect((await server.get('/healthz')).status).to.equal(404)
    expect((await server.get('/')).status).to.equal(404)
  })

  it('stops listening when aborted', async () => {
    const server = serve({healthz: new Map()})
    const url = await server.url('/healthz')
    await server.stop()
    const error = await fetch(url).then(() => undefined, (e: unknown) => e)
    expect(error).to.be.instanceOf(Error)
  })

  it('fails to start, naming the address, when the port is taken', async () => {
    const first = serve({healthz: new Map()})
    await first.server.waitReady(first.controller.signal)
    const port = first.server.address()?.port ?? 0
    const second = new ObserveServer({name: 'metrics', address: {host: '127.0.0.1', port}, metrics: new Registry()})
    const error = await second.start(new AbortController().signal).then(() => undefined, (e: unknown) => e as Error)
    expect(error?.message).to.match(new RegExp(`^metrics: cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`))
  })
})

describe('observeServers', () => {
  const registry = new Registry()
  const checks = new Map<string, HealthCheck>()
  const plan = (metrics: string, probes: string) =>
    observeServers({metricsAddress: parseBindAddress(metrics), probeAddress: parseBindAddress(probes), metrics: registry, healthz: checks, readyz: checks}).map((s) => s.name)

  it('runs two servers for two addresses', () => expect(plan(':8080', ':8081')).to.deep.equal(['metrics', 'health-probes']))
  it('runs one server for both on one address', () => expect(plan(':8080', ':8080')).to.deep.equal(['metrics-and-probes']))
  it('leaves out a side that is off', () => expect(plan('0', ':8081')).to.deep.equal(['health-probes']))
  it('runs none when both are off', () => expect(plan('0', '')).to.deep.equal([]))
  it('keeps two ephemeral ports apart', () => expect(plan('127.0.0.1:0', '127.0.0.1:0')).to.have.length(2))
})
