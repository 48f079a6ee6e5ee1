/**
 * The runtime probe over real gRPC and real unix sockets, against the test runtime, for every kind.
 * Deadlines are a few hundred ms; every wait is on an outcome, bounded by a guard.
 */
import {join} from 'node:path'
import {isAbortError} from 'abort-controller-x'
import {expect} from 'chai'
import {Status} from 'nice-grpc'
import {ProbeError} from '../../../src/core/errors.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {createRuntimeProbe} from '../../../src/iri/index.ts'
import type {RuntimeClient} from '../../../src/iri/index.ts'
import {startTestRuntime, type TestRuntime} from '../../../src/iri/test-runtime.ts'
import {rejectionOf, socketDir, waitUntil, within} from './support.ts'

/** Written out rather than derived from the kinds table, so a wrong table fails here. */
const PROBE_PATHS = {
  machine: '/machine.v1alpha1.MachineRuntime/Status',
  volume: '/volume.v1alpha1.VolumeRuntime/Status',
  bucket: '/bucket.v1alpha1.BucketRuntime/ListBucketClasses',
} as const

// Long enough that a cold first call (channel set-up on a busy 2-core machine) never misses it;
// short enough that the hang tests stay quick.
const DEADLINE_MS = 1500
/** How long a test waits for an outcome that should come at once. */
const GUARD_MS = 5000
/** Slack allowed past a probe's deadline before the test calls the deadline ignored. */
const LATE_MS = 2000

for (const kind of Object.values(POOL_KINDS)) {
  const path = PROBE_PATHS[kind.name]

  describe(`IRI runtime probe: ${kind.name}`, () => {
    let dir: Awaited<ReturnType<typeof socketDir>>
    let runtime: TestRuntime
    let probe: RuntimeClient

    beforeEach(async () => {
      dir = await socketDir()
      runtime = await startTestRuntime({kind, socketPath: join(dir.dir, 'runtime.sock')})
      probe = createRuntimeProbe(kind, runtime.endpoint, {timeoutMs: DEADLINE_MS})
    })

    afterEach(async () => {
      probe.close()
      await runtime.stop()
      await dir.remove()
    })

    it(`calls ${path} and resolves when the runtime answers`, async () => {
      expect(probe.method).to.equal(path)
      expect(kind.probePath, "the one spelling of the method in every Ready message").to.equal(path)
      await within(GUARD_MS, 'probe', probe.probe(new AbortController().signal))
      expect(runtime.calls).to.deep.equal({probe: 1, version: 0, cancelled: 0})
    })

    it('resolves when the runtime answers int64 values above 2^53 (up to 2^63 - 1)', async () => {
      const huge = await startTestRuntime({kind, socketPath: join(dir.dir, 'huge.sock'), answer: 'int64-above-2^53'})
      const client = createRuntimeProbe(kind, huge.endpoint, {timeoutMs: DEADLINE_MS})
      try {
        await within(GUARD_MS, 'probe of a runtime with huge numbers', client.probe(new AbortController().signal))
        expect(huge.calls.probe).to.equal(1)
      } finally {
        client.close()
        await huge.stop()
      }
    })

    it('rejects with a ProbeError naming the method, the runtime’s status code and its message', async () => {
      runtime.behave({mode: 'fail', code: Status.RESOURCE_EXHAUSTED, message: 'pool is full'})
      const error = await within(GUARD_MS, 'failing probe', rejectionOf(probe.probe(new AbortController().signal)))
      expect(error).to.be.instanceOf(ProbeError)
      expect(error.message).to.equal(`${path} RESOURCE_EXHAUSTED: pool is full`)
    })

    it('fails with DEADLINE_EXCEEDED when the runtime hangs, and the runtime sees the call cancelled', async () => {
      runtime.behave({mode: 'hang'})
      const error = await within(DEADLINE_MS + LATE_MS, 'hanging probe', rejectionOf(probe.probe(new AbortController().signal)))
      expect(error).to.be.instanceOf(ProbeError)
      expect(error.message).to.match(new RegExp(`^${path} DEADLINE_EXCEEDED: `))
      await waitUntil(GUARD_MS, 'the runtime sees the cancellation', () => runtime.calls.cancelled === 1)
    })

    it('succeeds when the runtime is slow but answers before the deadline', async () => {
      runtime.behave({mode: 'slow', delayMs: DEADLINE_MS / 3})
      await within(GUARD_MS, 'slow probe', probe.probe(new AbortController().signal))
      expect(runtime.calls).to.deep.equal({probe: 1, version: 0, cancelled: 0})
    })

    it('rejects with UNAVAILABLE naming the socket when nothing listens there', async () => {
      const missing = join(dir.dir, 'missing.sock')
      const lonely = createRuntimeProbe(kind, missing, {timeoutMs: DEADLINE_MS})
      try {
        const error = await within(GUARD_MS, 'probe of a missing socket', rejectionOf(lonely.probe(new AbortController().signal)))
        expect(error).to.be.instanceOf(ProbeError)
        expect(error.message).to.equal(`${path} UNAVAILABLE: connect ENOENT ${missing}`)
      } finally {
        lonely.close()
      }
    })

    it('stops at once when its signal is aborted, with an abort rather than a ProbeError', async () => {
      runtime.behave({mode: 'hang'})
      const patient = createRuntimeProbe(kind, runtime.endpoint, {timeoutMs: 60_000})
      try {
        const controller = new AbortController()
        const outcome = rejectionOf(patient.probe(controller.signal))
        await waitUntil(GUARD_MS, 'the runtime receives the call', () => runtime.calls.probe === 1)
        controller.abort()
        const error = await within(GUARD_MS, 'aborted probe', outcome)
        expect(isAbortError(error), `${error.name}: ${error.message}`).to.be.true
        expect(error).not.to.be.instanceOf(ProbeError)
        await waitUntil(GUARD_MS, 'the runtime sees the cancellation', () => runtime.calls.cancelled === 1)
      } finally {
        patient.close()
      }
    })
  })
}
