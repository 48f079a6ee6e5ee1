/**
 * Finding the runtime endpoint: flag, then environment, then the first well-known socket to appear,
 * with a fake clock so waiting costs no time. Sockets are real ones in a temp directory.
 */
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {createServer} from 'node:net'
import type {Server} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {expect} from 'chai'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {discoverRuntimeEndpoint, normaliseEndpoint} from '../../../src/iri/endpoint.ts'
import {FakeClock} from '../../support/fake-clock.ts'

const machine = POOL_KINDS.machine

/** A promise's state without waiting for it, so a test can say "still waiting" at a given time. */
function track<T>(promise: Promise<T>) {
  const state: {settled: boolean; value?: T; error?: unknown} = {settled: false}
  promise.then(
    (value) => Object.assign(state, {settled: true, value}),
    (error: unknown) => Object.assign(state, {settled: true, error}),
  )
  return state
}

function mustNotLook(path: string): boolean {
  throw new Error(`looked for a socket at ${path}, but an explicit endpoint was given`)
}

describe('IRI endpoint discovery', () => {
  let dir: string
  let servers: Server[]
  let clock: FakeClock

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ironpool-disc-'))
    servers = []
    clock = new FakeClock()
  })

  afterEach(async () => {
    for (const server of servers) await new Promise((resolve) => server.close(resolve))
    await rm(dir, {recursive: true, force: true})
  })

  async function listen(path: string): Promise<void> {
    const server = createServer()
    servers.push(server)
    await new Promise<void>((resolve) => server.listen(path, resolve))
  }

  it('uses the flag over the environment, without looking for sockets', async () => {
    const endpoint = await discoverRuntimeEndpoint({
      kind: machine,
      flag: 'unix:///run/flag.sock',
      env: {IRI_MACHINE_RUNTIME_ENDPOINT: 'unix:///run/env.sock'},
      isSocket: mustNotLook,
      clock,
    })
    expect(endpoint).to.equal('unix:///run/flag.sock')
  })

  it('uses the kind’s environment variable over the well-known sockets', async () => {
    const socket = join(dir, 'broker.sock')
    await listen(socket)
    const endpoint = await discoverRuntimeEndpoint({
      kind: machine,
      env: {IRI_MACHINE_RUNTIME_ENDPOINT: 'unix:///run/env.sock'},
      socketPaths: [socket],
      clock,
    })
    expect(endpoint).to.equal('unix:///run/env.sock')
  })

  it('treats an empty flag as absent and ignores other kinds’ variables', async () => {
    const endpoint = await discoverRuntimeEndpoint({
      kind: POOL_KINDS.bucket,
      flag: '',
      env: {IRI_MACHINE_RUNTIME_ENDPOINT: '/run/machine.sock', IRI_BUCKET_RUNTIME_ENDPOINT: '/run/bucket.sock'},
      isSocket: mustNotLook,
      clock,
    })
    expect(endpoint).to.equal('unix:///run/bucket.sock')
  })

  it('turns a bare path from the flag or the environment into a unix target', async () => {
    expect(await discoverRuntimeEndpoint({kind: machine, flag: '/run/m.sock', clock})).to.equal('unix:///run/m.sock')
    const fromEnv = await discoverRuntimeEndpoint({kind: POOL_KINDS.volume, env: {IRI_VOLUME_RUNTIME_ENDPOINT: '/run/v.sock'}, clock})
    expect(fromEnv).to.equal('unix:///run/v.sock')
  })

  it('takes the first existing socket in order, skipping a missing path and a plain file', async () => {
    const [missing, file, provider, later] = ['missing.sock', 'file.sock', 'provider.sock', 'later.sock'].map((name) => join(dir, name))
    await writeFile(file!, 'not a socket')
    await listen(provider!)
    await listen(later!)
    const endpoint = await discoverRuntimeEndpoint({kind: machine, env: {}, socketPaths: [missing!, file!, provider!, later!], clock})
    expect(endpoint).to.equal(`unix://${provider}`)
  })

  it('waits, looking every second, until a socket appears', async () => {
    const socket = join(dir, 'late.sock')
    const result = track(discoverRuntimeEndpoint({kind: machine, env: {}, socketPaths: [socket], clock}))
    await clock.advance(5000)
    expect(result.settled, 'settled before the socket appeared').to.be.false
    await listen(socket)
    await clock.advance(999)
    expect(result.settled, 'looked between the once-a-second checks').to.be.false
    await clock.advance(1)
    expect(result).to.deep.equal({settled: true, value: `unix://${socket}`})
  })

  it('gives up after the timeout, naming every path tried and the timeout', async () => {
    const paths = [join(dir, 'broker.sock'), join(dir, 'provider.sock')]
    const result = track(discoverRuntimeEndpoint({kind: machine, env: {}, socketPaths: paths, clock}))
    await clock.advance(19_999)
    expect(result.settled, 'gave up before 20s').to.be.false
    await clock.advance(1)
    expect(result.settled).to.be.true
    const message = (result.error as Error).message
    expect(message).to.include('20s')
    for (const path of paths) expect(message).to.include(path)
    expect(message).to.include('IRI_MACHINE_RUNTIME_ENDPOINT')
  })

  it('looks at the kind’s well-known sockets by default, in IronCore’s order', async () => {
    const looks: string[] = []
    const result = track(
      discoverRuntimeEndpoint({kind: POOL_KINDS.volume, env: {}, timeoutMs: 1500, isSocket: (path) => (looks.push(path), false), clock}),
    )
    await clock.advance(1500)
    expect(looks.slice(0, 2)).to.deep.equal(['/var/run/iri-volumebroker.sock', '/var/run/iri-volumeprovider.sock'])
    expect((result.error as Error).message).to.equal(
      'no volume runtime socket appeared within 1500ms (tried /var/run/iri-volumebroker.sock, /var/run/iri-volumeprovider.sock); ' +
        'set IRI_VOLUME_RUNTIME_ENDPOINT or pass the runtime endpoint explicitly',
    )
  })

  it('stops waiting when aborted, with the abort reason, leaving no timer behind', async () => {
    const controller = new AbortController()
    const result = track(
      discoverRuntimeEndpoint({kind: machine, env: {}, socketPaths: [join(dir, 'never.sock')], signal: controller.signal, clock}),
    )
    await clock.advance(2000)
    const reason = new Error('shutting down')
    controller.abort(reason)
    await clock.advance(0)
    expect(result).to.deep.equal({settled: true, error: reason})
    expect(clock.pending).to.equal(0)
  })
})

describe('normaliseEndpoint', () => {
  const cases = [
    {input: '/var/run/iri-machinebroker.sock', output: 'unix:///var/run/iri-machinebroker.sock', why: 'an absolute path is a unix socket'},
    {input: './runtime.sock', output: 'unix:./runtime.sock', why: 'a relative path is a unix socket, relative to the working directory'},
    {input: 'unix:///run/x.sock', output: 'unix:///run/x.sock', why: 'a unix target is kept'},
    {input: ' /run/x.sock\n', output: 'unix:///run/x.sock', why: 'whitespace from an env file is dropped'},
    {input: 'localhost:50051', output: 'localhost:50051', why: 'a host and port is kept'},
  ]
  for (const {input, output, why} of cases) {
    it(`${JSON.stringify(input)} → ${output}: ${why}`, () => {
      expect(normaliseEndpoint(input)).to.equal(output)
    })
  }

  it('refuses an empty endpoint', () => {
    expect(() => normaliseEndpoint('  ')).to.throw('IRI runtime endpoint is empty')
  })
})
