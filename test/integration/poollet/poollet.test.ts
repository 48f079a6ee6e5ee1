/**
 * `ironpool poollet` as a real process, as the poollet's own identity (RBAC no wider than IronCore's),
 * against the real API server and a real gRPC runtime on a unix socket, for every pool kind.
 */
import {expect} from 'chai'
import {Status} from 'nice-grpc'
import type {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {POOL_KIND_NAMES, POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {KubeObjects, readyOf} from '../../support/kube-objects.ts'
import {poolletControlPlane, startPoollet, type PoolletFixture} from '../../support/poollet-env.ts'
import {waitFor} from '../../support/wait.ts'

/** Heartbeats whose probes a busy machine does not time out: three renewals in ~3 s, each probe allowed 900 ms. */
const QUIET = ['--heartbeat-interval=1s', '--heartbeat-status-timeout=900ms', '--heartbeat-lease-duration=4s']

describe('ironpool poollet (real process, real API server, real runtime)', function () {
  this.timeout(60_000)
  let plane: ControlPlane
  let admin: KubeObjects
  let fixture: PoolletFixture | undefined
  let counter = 0

  before(async () => {
    plane = await poolletControlPlane()
    admin = new KubeObjects(plane.adminKubeconfig)
  })

  afterEach(async () => {
    await fixture?.stop()
    fixture = undefined
  })

  for (const kindName of POOL_KIND_NAMES) {
    const kind = POOL_KINDS[kindName]
    const newPool = async () => {
      const name = `pl-${kindName}-${++counter}`
      await admin.createPool(kind, name)
      return name
    }
    const ready = async (pool: string) => readyOf(await admin.getPool(kind, pool))

    describe(kind.kind, () => {
      it('creates the Lease with the holder prefix and duration, and advances its renewTime', async () => {
        const pool = await newPool()
        fixture = await startPoollet(plane, kind, pool)
        const first = await waitFor('the Lease', () => admin.getLease(kind, pool))
        expect(first.spec?.holderIdentity).to.match(new RegExp(`^${pool}_[0-9a-f-]{36}$`))
        expect(first.spec?.leaseDurationSeconds).to.equal(2)
        expect(String(first.spec?.renewTime)).to.match(/\.\d{6}Z$/)
        await waitFor('renewTime to advance', async () => String((await admin.getLease(kind, pool))?.spec?.renewTime) !== String(first.spec?.renewTime))
      })

      it('sets Ready True/HeartbeatReceived with observedGeneration = generation', async () => {
        const pool = await newPool()
        fixture = await startPoollet(plane, kind, pool)
        const condition = await waitFor('Ready True', async () => ((await ready(pool))?.status === 'True' ? ready(pool) : undefined))
        const {metadata} = await admin.getPool(kind, pool)
        expect(condition).to.include({status: 'True', reason: 'HeartbeatReceived', message: kind.readyMessage, observedGeneration: metadata.generation})
      })

      it('keeps Ready True while its runtime answers int64 values above 2^53', async () => {
        const pool = await newPool()
        fixture = await startPoollet(plane, kind, pool, undefined, undefined, 'int64-above-2^53')
        await waitFor('Ready True', async () => (await ready(pool))?.status === 'True')
        // Several more probes answered with huge numbers, and Ready still True.
        const probes = fixture.runtime.calls.probe
        await waitFor('three more probes', () => fixture!.runtime.calls.probe >= probes + 3)
        expect((await ready(pool))?.status).to.equal('True')
      })

      it('leaves the pool untouched (same resourceVersion) by heartbeats that change nothing', async () => {
        const pool = await newPool()
        // A status timeout far above the test runtime's answer: at FAST's 150 ms a probe this worker's
        // busy event loop answered late (a fresh-clone run at load 8) was rightly Ready False, a change.
        fixture = await startPoollet(plane, kind, pool, QUIET)
        await waitFor('Ready True', async () => (await ready(pool))?.status === 'True')
        const before = (await admin.getPool(kind, pool)).metadata.resourceVersion
        const lease = await admin.getLease(kind, pool)
        // Several intervals pass, witnessed by the Lease being renewed three more times.
        let renewals = 0
        let last = String(lease?.spec?.renewTime)
        await waitFor('three renewals', async () => {
          const now = String((await admin.getLease(kind, pool))?.spec?.renewTime)
          if (now !== last) renewals++
          last = now
          return renewals >= 3
        })
        const after = await admin.getPool(kind, pool)
        expect(after.metadata.resourceVersion, `the pool was written; its conditions now: ${JSON.stringify(after.status?.conditions)}`).to.equal(before)
      })

      it('turns Ready False/RuntimeUnreachable with the error text when the runtime fails, and back to True', async () => {
        const pool = await newPool()
        fixture = await startPoollet(plane, kind, pool)
        await waitFor('Ready True', async () => (await ready(pool))?.status === 'True')
        fixture.runtime.behave({mode: 'fail', code: Status.UNAVAILABLE, message: 'disk on fire'})
        const failed = await waitFor('Ready False', async () => ((await ready(pool))?.status === 'False' ? ready(pool) : undefined))
        expect(failed?.reason).to.equal('RuntimeUnreachable')
        expect(failed?.message).to.include('UNAVAILABLE').and.to.include('disk on fire').and.to.include(kind.probeMethod)
        fixture.runtime.behave({mode: 'answer'})
        await waitFor('Ready True again', async () => (await ready(pool))?.status === 'True')
        const reasons = await waitFor('an Event of each change', async () => {
          const out = await plane.kubectl(['get', 'events', '-n', 'default', '--field-selector', `involvedObject.name=${pool}`, '-o', 'jsonpath={.items[*].reason}'])
          const seen = out.split(' ')
          return seen.includes(`${kind.kind}NotReady`) && seen.filter((r) => r === `${kind.kind}Ready`).length > 0 ? seen : undefined
        })
        expect(reasons).to.include(`${kind.kind}NotReady`)
      })

      it('turns Ready False within the status timeout when the runtime hangs, and keeps renewing the Lease', async () => {
        const pool = await newPool()
        fixture = await startPoollet(plane, kind, pool)
        await waitFor('Ready True', async () => (await ready(pool))?.status === 'True')
        fixture.runtime.behave({mode: 'hang'})
        const failed = await waitFor('Ready False', async () => ((await ready(pool))?.status === 'False' ? ready(pool) : undefined))
        // Whichever fires first: the gRPC deadline or the tick's own bound on the probe, both the status timeout.
        expect(failed?.message).to.match(/DEADLINE_EXCEEDED|no answer within 150ms/)
        const renewTime = String((await admin.getLease(kind, pool))?.spec?.renewTime)
        await waitFor('the Lease renewed while the runtime hangs', async () => String((await admin.getLease(kind, pool))?.spec?.renewTime) !== renewTime)
      })

      it('takes over a Lease held by another identity (leaseTransitions + 1, Info log naming it)', async () => {
        const pool = await newPool()
        await admin.createLease(kind, pool, {holderIdentity: 'someone-else', leaseDurationSeconds: 40, leaseTransitions: 3})
        fixture = await startPoollet(plane, kind, pool)
        const lease = await waitFor('the Lease taken over', async () => {
          const l = await admin.getLease(kind, pool)
          return l?.spec?.holderIdentity?.startsWith(`${pool}_`) ? l : undefined
        })
        expect(lease.spec?.leaseTransitions).to.equal(4)
        const log = await fixture.poollet.waitForLog('took over')
        expect(log.level).to.equal('info')
        expect(JSON.stringify(log)).to.include('someone-else')
      })

      it('keeps a condition of another type that someone else added', async () => {
        const pool = await newPool()
        const other = {type: 'Scheduling', status: 'True' as const, reason: 'Fine', message: 'set by another writer'}
        await admin.setConditions(kind, pool, [other])
        fixture = await startPoollet(plane, kind, pool)
        await waitFor('Ready True', async () => (await ready(pool))?.status === 'True')
        fixture.runtime.behave({mode: 'fail', code: Status.INTERNAL, message: 'boom'})
        await waitFor('Ready False', async () => (await ready(pool))?.status === 'False')
        const conditions = (await admin.getPool(kind, pool)).status?.conditions ?? []
        expect(conditions.find((c) => c.type === 'Scheduling')).to.deep.include(other)
      })

      it('sets Ready back to True after someone else set it Unknown', async () => {
        const pool = await newPool()
        fixture = await startPoollet(plane, kind, pool)
        await waitFor('Ready True', async () => (await ready(pool))?.status === 'True')
        await admin.setConditions(kind, pool, [{type: 'Ready', status: 'Unknown', reason: kind.unknownReason, message: kind.unknownMessage}])
        await waitFor('Ready True again', async () => (await ready(pool))?.status === 'True')
      })

      it('updates observedGeneration when the pool generation moves', async () => {
        const pool = await newPool()
        fixture = await startPoollet(plane, kind, pool)
        await waitFor('Ready True', async () => (await ready(pool))?.status === 'True')
        const bumped = await admin.patchPool(kind, pool, {spec: {providerID: `test://${pool}/2`}})
        expect(bumped.metadata.generation).to.be.greaterThan(1)
        await waitFor('observedGeneration to follow', async () => (await ready(pool))?.observedGeneration === bumped.metadata.generation)
      })
    })
  }
})
