/**
 * A second writer between the poollet's read of its pool and its write of Ready, on the real API server:
 * the heartbeat's write carries the stale resourceVersion, so it is refused (409), and the heartbeat
 * reads again and writes again. Nothing the other writer put on the pool is lost, and Ready is written.
 * The heartbeat runs in this process (its real engine, the real client-node stores, as the pool's own
 * poollet identity, against a real runtime) so that the other write lands exactly in that window.
 */
import path from 'node:path'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {expect} from 'chai'
import {ConflictError, Heartbeat, systemClock, type Pool, type PoolStatusStore} from '../../../src/core/index.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {createRuntimeProbe} from '../../../src/iri/index.ts'
import {startTestRuntime} from '../../../src/iri/test-runtime.ts'
import {loadKubeConfig} from '../../../src/kube/http/kubeconfig.ts'
import {createLeaseStore} from '../../../src/kube/stores/lease-store.ts'
import {createPoolStatusStore} from '../../../src/kube/stores/pool-status-store.ts'
import {FakeLogger} from '../../support/fake-logger.ts'
import {KubeObjects, readyOf} from '../../support/kube-objects.ts'
import {poolletControlPlane, poolletIdentity} from '../../support/poollet-env.ts'

const kind = POOL_KINDS.machine

describe('poollet Ready write with a second writer in between (real API server)', function () {
  this.timeout(60_000)

  it('is refused on the stale resourceVersion, reads again and writes Ready, keeping the other writer\'s condition and status field', async () => {
    const plane = await poolletControlPlane()
    const admin = new KubeObjects(plane.adminKubeconfig)
    const pool = `conflict-${Date.now()}`
    await admin.createPool(kind, pool)
    const other = {type: 'Scheduling', status: 'True' as const, reason: 'Fine', message: 'set by another writer'}

    const kubeConfig = loadKubeConfig({kubeconfig: (await poolletIdentity(plane, kind, pool)).kubeconfig})
    const real = createPoolStatusStore(kubeConfig, kind)
    const reads: string[] = []
    const writes: {resourceVersion: string; outcome: 'written' | 'conflict' | 'other error'}[] = []
    let interfered = false
    // The real store, with the other writer stepping in once: after the heartbeat's first read, before its write.
    const pools: PoolStatusStore = {
      async get(name) {
        const read = await real.get(name)
        reads.push(read?.metadata.resourceVersion ?? 'none')
        if (!interfered && read !== undefined) {
          interfered = true
          const current = await admin.getPool(kind, pool)
          await admin.patchStatus(kind, pool, {state: 'Pending', conditions: [...(current.status?.conditions ?? []), other]})
        }
        return read
      },
      async writeConditions(name, resourceVersion, conditions) {
        try {
          const written = await real.writeConditions(name, resourceVersion, conditions)
          writes.push({resourceVersion, outcome: 'written'})
          return written
        } catch (error) {
          writes.push({resourceVersion, outcome: error instanceof ConflictError ? 'conflict' : 'other error'})
          throw error
        }
      },
    }

    const dir = await mkdtemp(path.join(tmpdir(), 'ironpool-conflict-'))
    const runtime = await startTestRuntime({kind, socketPath: path.join(dir, 'runtime.sock')})
    const probe = createRuntimeProbe(kind, runtime.endpoint, {timeoutMs: 2_000})
    const logger = new FakeLogger()
    try {
      const heartbeat = new Heartbeat({
        kind,
        poolName: pool,
        holderIdentity: `${pool}_conflict-test`,
        probe,
        leases: createLeaseStore(kubeConfig, kind.leaseNamespace),
        pools,
        clock: systemClock,
        logger,
        statusTimeoutMs: 2_000,
      })
      const result = await heartbeat.tickOnce(new AbortController().signal)
      expect(result.ready, JSON.stringify(logger.entries)).to.deep.include({outcome: 'written', status: 'True'})
      // The stale write was refused, the pool read again, and the write on the fresh version went through.
      expect(writes.map((w) => w.outcome)).to.deep.equal(['conflict', 'written'])
      expect(reads).to.have.length(2)
      expect(writes[0]?.resourceVersion).to.equal(reads[0])
      expect(writes[1]?.resourceVersion).to.equal(reads[1])

      const after: Pool & {status?: {state?: string}} = await admin.getPool(kind, pool)
      expect(readyOf(after)).to.include({status: 'True', reason: 'HeartbeatReceived'})
      expect(after.status?.conditions?.find((c) => c.type === 'Scheduling')).to.deep.include(other)
      expect(after.status?.state).to.equal('Pending')
    } finally {
      probe.close()
      await runtime.stop()
      await rm(dir, {recursive: true, force: true})
    }
  })
})
