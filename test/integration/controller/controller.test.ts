/**
 * `ironpool controller` as a real process, as its own ServiceAccount with deploy/'s RBAC, against the
 * real API server, for every pool kind. Grace is 2 s; time passing is witnessed by witness pools
 * (silent pools created for the purpose) being marked, never by sleeping.
 */
import {expect} from 'chai'
import type {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {POOL_KIND_NAMES, POOL_KINDS, type PoolKind} from '../../../src/core/pool-kinds.ts'
import {sharedControlPlane} from '../../support/control-plane.ts'
import type {ControllerProcess} from '../../support/controller-env.ts';
import { GRACE_MS, controllerIdentity, keepRenewing, startController} from '../../support/controller-env.ts'
import {KubeObjects, readyOf} from '../../support/kube-objects.ts'
import {waitFor} from '../../support/wait.ts'

const KINDS = POOL_KIND_NAMES.map((n) => POOL_KINDS[n])

describe('ironpool controller (real process, real API server)', function () {
  this.timeout(90_000)
  let plane: ControlPlane
  let admin: KubeObjects
  let controller: ControllerProcess | undefined
  let counter = 0

  const newPool = async (kind: PoolKind, prefix = 'ct') => {
    const name = `${prefix}-${kind.name}-${++counter}`
    await admin.createPool(kind, name)
    return name
  }
  const readyStatus = async (kind: PoolKind, pool: string) => readyOf(await admin.getPool(kind, pool))?.status
  const unknown = (kind: PoolKind, pool: string) => waitFor(`${pool} Unknown`, async () => (await readyStatus(kind, pool)) === 'Unknown', {timeoutMs: 30_000})
  /** Lets at least n grace periods pass, witnessed by n silent pools marked one after another. */
  const gracePeriodsPass = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const witness = await newPool(POOL_KINDS.machine, 'witness')
      await unknown(POOL_KINDS.machine, witness)
    }
  }

  before(async () => {
    plane = await sharedControlPlane()
    admin = new KubeObjects(plane.adminKubeconfig)
    await controllerIdentity(plane)
  })

  afterEach(async () => {
    if (controller !== undefined) expect((await controller.stop()).code, 'controller exit code after SIGTERM').to.equal(0)
    controller = undefined
  })

  it('marks a pool whose Lease has no renewTime Unknown, once, for every kind', async () => {
    const pools = await Promise.all(KINDS.map(async (kind) => {
      const pool = await newPool(kind)
      await admin.createLease(kind, pool, {holderIdentity: `${pool}_x`, leaseDurationSeconds: 40})
      return {kind, pool}
    }))
    controller = await startController(plane)
    for (const {kind, pool} of pools) {
      await unknown(kind, pool)
      const ready = readyOf(await admin.getPool(kind, pool))
      const {metadata} = await admin.getPool(kind, pool)
      expect(ready).to.include({status: 'Unknown', reason: kind.unknownReason, message: kind.unknownMessage, observedGeneration: metadata.generation})
    }
    const versions = await Promise.all(pools.map(async ({kind, pool}) => (await admin.getPool(kind, pool)).metadata.resourceVersion))
    await gracePeriodsPass(3)
    const after = await Promise.all(pools.map(async ({kind, pool}) => (await admin.getPool(kind, pool)).metadata.resourceVersion))
    expect(after).to.deep.equal(versions)
  })

  it('marks a pool whose Lease is never renewed, and a pool with no Lease at all, for every kind', async () => {
    const pools = await Promise.all(KINDS.flatMap((kind) => [
      (async () => {
        const pool = await newPool(kind)
        await admin.renewLease(kind, pool, '2026-01-01T00:00:00.000000Z')
        return {kind, pool}
      })(),
      (async () => ({kind, pool: await newPool(kind)}))(),
    ]))
    controller = await startController(plane)
    for (const {kind, pool} of pools) await unknown(kind, pool)
  })

  it('never marks a pool whose Lease is renewed often, for every kind', async () => {
    const pools = await Promise.all(KINDS.map(async (kind) => ({kind, pool: await newPool(kind)})))
    const renewers = pools.map(({kind, pool}) => keepRenewing(admin, kind, pool))
    try {
      controller = await startController(plane)
      await gracePeriodsPass(3)
      for (const {kind, pool} of pools) expect(await readyStatus(kind, pool), pool).to.equal(undefined)
      expect(controller.marked()).to.not.include.members(pools.map((p) => p.pool))
    } finally {
      await Promise.all(renewers.map((r) => r.stop()))
    }
  })

  it('never marks a pool whose Ready progresses without a Lease (generation, False→True, True→False)', async () => {
    const kind = POOL_KINDS.volume
    const scenarios = {
      trueGeneration: await newPool(kind),
      falseGeneration: await newPool(kind),
      flapping: await newPool(kind),
    }
    let step = 0
    let stopped = false
    const ready = (status: 'True' | 'False', generation: number) => [{type: 'Ready', status, reason: status === 'True' ? 'HeartbeatReceived' : 'RuntimeUnreachable', message: 'stand-in', observedGeneration: generation}]
    const progress = (async () => {
      while (!stopped) {
        step++
        await Promise.all([
          admin.setConditions(kind, scenarios.trueGeneration, ready('True', step)),
          admin.setConditions(kind, scenarios.falseGeneration, ready('False', step)),
          admin.setConditions(kind, scenarios.flapping, ready(step % 2 ? 'True' : 'False', 1)),
        ])
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
    })()
    try {
      controller = await startController(plane)
      await gracePeriodsPass(3)
      expect(controller.marked()).to.not.include.members(Object.values(scenarios))
      for (const pool of Object.values(scenarios)) expect(await readyStatus(kind, pool)).to.not.equal('Unknown')
    } finally {
      stopped = true
      await progress
    }
  })

  it('writes nothing more once a pool reports Ready again after Unknown', async () => {
    const kind = POOL_KINDS.bucket
    const pool = await newPool(kind)
    controller = await startController(plane)
    await unknown(kind, pool)
    await admin.setConditions(kind, pool, [{type: 'Ready', status: 'True', reason: 'HeartbeatReceived', message: kind.readyMessage, observedGeneration: 1}])
    const renewer = keepRenewing(admin, kind, pool)
    try {
      await gracePeriodsPass(3)
      expect(await readyStatus(kind, pool)).to.equal('True')
      expect(controller.marked().filter((p) => p === pool)).to.have.length(1)
    } finally {
      await renewer.stop()
    }
  })

  it('forgets a deleted pool (its Ready count goes down in the metrics)', async () => {
    const kind = POOL_KINDS.machine
    controller = await startController(plane)
    const count = async () => (await controller?.metric(`ironpool_controller_pools{kind="${kind.name}",status="Unknown"}`)) ?? NaN
    const pool = await newPool(kind)
    await unknown(kind, pool)
    const before = await waitFor('the gauge to count the pool', async () => {
      const n = await count()
      return n > 0 ? n : undefined
    })
    await admin.deletePool(kind, pool)
    await waitFor('the gauge to drop by one', async () => (await count()) === before - 1)
  })

  it('gives every pool a fresh grace period when it restarts', async () => {
    const kind = POOL_KINDS.machine
    const pool = await newPool(kind)
    const renewer = keepRenewing(admin, kind, pool)
    controller = await startController(plane)
    await gracePeriodsPass(1)
    await renewer.stop()
    expect((await controller.stop()).code).to.equal(0)
    controller = undefined
    // Silent for two grace periods before the new controller starts: one that judged the poollet's
    // renewTime on its own clock would mark the pool at once.
    const lastRenew = Date.parse(String((await admin.getLease(kind, pool))?.spec?.renewTime))
    await waitFor('the Lease to be silent for two grace periods', () => Date.now() - lastRenew > 2 * GRACE_MS)
    // Judged on the controller's own clock: a grace period passes on it before the mark. Witnessed by
    // the controller itself, not by a clock of the test's: its API probe answers every grace/10, so by
    // the mark it has answered about ten; one that judged the poollet's renewTime would mark at its
    // first sync, after one or two. Five leaves room for a probe slowed by a busy machine.
    controller = await startController(plane)
    await unknown(kind, pool)
    const probes = await controller.metric('ironpool_controller_api_probe_duration_seconds_count')
    expect(probes, 'API probes the controller answered before the mark (one per grace/10)').to.be.at.least(5)
    // The Unknown can be read before the controller's log line about it has come through its pipe.
    const mark = await controller.waitForLog('marked Ready=Unknown', {pool})
    expect(mark.kind).to.equal(kind.name)
  })

  it('keeps a pool True with a real poollet, marks it Unknown when the poollet is frozen (SIGSTOP), and True again after SIGCONT', async () => {
    const {poolletControlPlane, startPoollet} = await import('../../support/poollet-env.ts')
    await poolletControlPlane()
    const kind = POOL_KINDS.machine
    const pool = await newPool(kind)
    const fixture = await startPoollet(plane, kind, pool, ['--heartbeat-interval=200ms', '--heartbeat-status-timeout=100ms', '--heartbeat-lease-duration=2s'])
    try {
      controller = await startController(plane)
      await waitFor('Ready True', async () => (await readyStatus(kind, pool)) === 'True')
      await gracePeriodsPass(2)
      expect(await readyStatus(kind, pool)).to.equal('True')
      fixture.poollet.child.kill('SIGSTOP')
      await unknown(kind, pool)
      fixture.poollet.child.kill('SIGCONT')
      await waitFor('Ready True after thaw', async () => (await readyStatus(kind, pool)) === 'True')
    } finally {
      fixture.poollet.child.kill('SIGCONT')
      await fixture.stop()
    }
  })
})
