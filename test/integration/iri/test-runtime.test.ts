/**
 * The test runtime itself, seen through a plain nice-grpc client: it is what the sandbox runs, so
 * its answers, switches and socket handling are checked on their own. Also the probe client's
 * channel life: close(), and recovery when a runtime comes back on the same socket.
 */
import {existsSync} from 'node:fs'
import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {expect} from 'chai'
import {Status, createChannel, createClient} from 'nice-grpc'
import type {Channel} from 'nice-grpc'
import {ProbeError, errorMessage} from '../../../src/core/errors.ts'
import type {RuntimeProbe} from '../../../src/core/ports.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import type {PoolKind} from '../../../src/core/pool-kinds.ts'
import {createRuntimeProbe} from '../../../src/iri/index.ts'
import {TEST_RUNTIME_NAME, startTestRuntime, type TestRuntime} from '../../../src/iri/test-runtime.ts'
import {runtimeServiceFor} from '../../../src/iri/runtime-service.ts'
import {rejectionOf, socketDir, within} from './support.ts'

const GUARD_MS = 5000

/** The repeated field of each kind's probe answer, in ts-proto's camelCase. */
const CLASS_LIST = {machine: 'machineClassStatus', volume: 'volumeClassStatus', bucket: 'bucketClasses'} as const

describe('IRI test runtime', () => {
  let dir: Awaited<ReturnType<typeof socketDir>>
  let channels: Channel[]

  beforeEach(async () => {
    dir = await socketDir()
    channels = []
  })

  afterEach(async () => {
    for (const channel of channels) channel.close()
    await dir.remove()
  })

  function rawClient(kind: PoolKind, endpoint: string) {
    const channel = createChannel(endpoint)
    channels.push(channel)
    return createClient(runtimeServiceFor(kind), channel)
  }

  for (const kind of Object.values(POOL_KINDS)) {
    it(`answers ${kind.name} Version and ${kind.probeMethod} with a plausible payload, counting the calls`, async () => {
      const runtime = await startTestRuntime({kind, socketPath: join(dir.dir, `${kind.name}.sock`)})
      try {
        const client = rawClient(kind, runtime.endpoint)
        const version = await within(GUARD_MS, 'Version', client.version({}))
        expect(version).to.deep.equal({runtimeName: TEST_RUNTIME_NAME, runtimeVersion: '0.1.0'})
        const answer = await within(GUARD_MS, kind.probeMethod, client.probe({}))
        expect(answer).to.have.property(CLASS_LIST[kind.name]).that.has.length(1)
        expect(runtime.calls).to.deep.equal({probe: 1, version: 1, cancelled: 0})
      } finally {
        await runtime.stop()
      }
    })
  }

  it('switches behaviour while running: a failing runtime that recovers answers again', async () => {
    const runtime = await startTestRuntime({
      kind: POOL_KINDS.volume,
      socketPath: join(dir.dir, 'volume.sock'),
      behaviour: {mode: 'fail', code: Status.UNAVAILABLE, message: 'backend down'},
    })
    try {
      const client = rawClient(POOL_KINDS.volume, runtime.endpoint)
      const error = await within(GUARD_MS, 'failing Status', rejectionOf(client.probe({})))
      expect(error.message).to.equal('/volume.v1alpha1.VolumeRuntime/Status UNAVAILABLE: backend down')
      runtime.behave({mode: 'answer'})
      await within(GUARD_MS, 'recovered Status', client.probe({}))
      expect(runtime.calls.probe).to.equal(2)
    } finally {
      await runtime.stop()
    }
  })

  it('replaces a stale socket file, and removes the socket when stopped', async () => {
    const socketPath = join(dir.dir, 'stale.sock')
    await writeFile(socketPath, 'left over from a crashed run')
    const runtime = await startTestRuntime({kind: POOL_KINDS.machine, socketPath})
    await within(GUARD_MS, 'Status on the replaced socket', rawClient(POOL_KINDS.machine, runtime.endpoint).probe({}))
    await runtime.stop()
    expect(existsSync(socketPath)).to.be.false
  })

  it('a probe after close() rejects with a ProbeError instead of reconnecting', async () => {
    const runtime = await startTestRuntime({kind: POOL_KINDS.bucket, socketPath: join(dir.dir, 'bucket.sock')})
    const probe = createRuntimeProbe(POOL_KINDS.bucket, runtime.endpoint, {timeoutMs: 1000})
    try {
      await within(GUARD_MS, 'probe before close', probe.probe(new AbortController().signal))
      probe.close()
      const error = await within(GUARD_MS, 'probe after close', rejectionOf(probe.probe(new AbortController().signal)))
      expect(error).to.be.instanceOf(ProbeError)
      expect(error.message).to.match(/^\/bucket\.v1alpha1\.BucketRuntime\/ListBucketClasses\b/)
      expect(runtime.calls.probe).to.equal(1)
    } finally {
      await runtime.stop()
    }
  })

  it('a probe succeeds again after its runtime comes back on the same socket', async () => {
    const socketPath = join(dir.dir, 'machine.sock')
    const first = await startTestRuntime({kind: POOL_KINDS.machine, socketPath})
    const probe = createRuntimeProbe(POOL_KINDS.machine, first.endpoint, {timeoutMs: 1000})
    let second: TestRuntime | undefined
    try {
      await within(GUARD_MS, 'probe of the first runtime', probe.probe(new AbortController().signal))
      await first.stop()
      const error = await within(GUARD_MS, 'probe while down', rejectionOf(probe.probe(new AbortController().signal)))
      expect(error.message).to.match(/ UNAVAILABLE: /)
      second = await startTestRuntime({kind: POOL_KINDS.machine, socketPath})
      await probeUntilOk(probe, GUARD_MS)
      expect(second.calls.probe).to.be.greaterThan(0)
    } finally {
      probe.close()
      await second?.stop()
    }
  })
})

/** Probes until one succeeds, as successive heartbeats would; fails after ms with the last error. */
async function probeUntilOk(probe: RuntimeProbe, ms: number): Promise<void> {
  const giveUp = Date.now() + ms
  for (;;) {
    try {
      await probe.probe(AbortSignal.timeout(ms))
      return
    } catch (error) {
      if (Date.now() >= giveUp) throw new Error(`no successful probe within ${ms}ms: ${errorMessage(error)}`)
    }
    // Pacing between attempts, not synchronisation: the outcome awaited is the probe's own.
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
