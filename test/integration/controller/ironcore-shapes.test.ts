/**
 * Pools shaped as IronCore serves them, on the real API server with ironpool's CRDs: a MachinePool
 * tainted NoExecute (drained for maintenance) that carries another writer's condition without times
 * stays under health monitoring. The real poollet keeps it True and turns it False when its runtime
 * fails; the real controller marks it Unknown when the poollet stops; the other writer's condition
 * survives every write untouched. The CRD keeps providerID immutable once set, as IronCore does.
 */
import {expect} from 'chai'
import {Status} from 'nice-grpc'
import type {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {findCondition} from '../../../src/core/conditions.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import type {PoolCondition} from '../../../src/core/types.ts'
import {controllerIdentity, startController, type ControllerProcess} from '../../support/controller-env.ts'
import {KubeObjects} from '../../support/kube-objects.ts'
import {poolletControlPlane, startPoollet, type PoolletFixture} from '../../support/poollet-env.ts'
import {waitFor} from '../../support/wait.ts'

const kind = POOL_KINDS.machine
/** Written without times, as in the recorded IronCore object (which serves them as null; a CRD stores them absent). */
const OTHER: PoolCondition = {type: 'NetworkReady', status: 'True', reason: 'Configured', message: 'written by another controller without times'}

describe('IronCore-shaped pools under health monitoring (real poollet, controller and API server)', function () {
  this.timeout(120_000)
  let plane: ControlPlane
  let admin: KubeObjects
  let controller: ControllerProcess | undefined
  let fixture: PoolletFixture | undefined

  before(async () => {
    plane = await poolletControlPlane()
    admin = new KubeObjects(plane.adminKubeconfig)
    await controllerIdentity(plane)
  })

  afterEach(async () => {
    await fixture?.stop()
    fixture = undefined
    if (controller !== undefined) await controller.stop()
    controller = undefined
  })

  const ready = async (pool: string) => findCondition((await admin.getPool(kind, pool)).status?.conditions, 'Ready')
  const other = async (pool: string) => findCondition((await admin.getPool(kind, pool)).status?.conditions, 'NetworkReady')

  it('a NoExecute-tainted MachinePool with another writer’s condition (no times) goes False on a runtime failure and Unknown when its poollet stops', async () => {
    const pool = 'ic-noexecute'
    await admin.createPool(kind, pool, {providerID: 'fixture://noexecute', taints: [{key: 'maintenance', effect: 'NoExecute'}]})
    await admin.setConditions(kind, pool, [OTHER])
    expect(await other(pool)).to.deep.equal(OTHER)

    fixture = await startPoollet(plane, kind, pool, ['--heartbeat-interval=200ms', '--heartbeat-status-timeout=100ms', '--heartbeat-lease-duration=2s'])
    controller = await startController(plane)
    await waitFor('Ready True', async () => (await ready(pool))?.status === 'True', {timeoutMs: 20_000})
    expect(await other(pool)).to.deep.equal(OTHER)

    fixture.runtime.behave({mode: 'fail', code: Status.UNAVAILABLE, message: 'runtime down for maintenance'})
    const down = await waitFor('Ready False', async () => ((await ready(pool))?.status === 'False' ? ready(pool) : undefined), {timeoutMs: 20_000})
    expect(down).to.include({reason: 'RuntimeUnreachable'})
    expect(down?.message).to.include('runtime down for maintenance')
    expect(await other(pool)).to.deep.equal(OTHER)

    await fixture.poollet.stop()
    const unknown = await waitFor('Ready Unknown', async () => ((await ready(pool))?.status === 'Unknown' ? ready(pool) : undefined), {timeoutMs: 20_000})
    expect(unknown).to.include({reason: kind.unknownReason, message: kind.unknownMessage})
    expect(await other(pool)).to.deep.equal(OTHER)
    // The Unknown can be read before the controller's log line about it has come through its pipe.
    await controller.waitForLog('marked Ready=Unknown', {pool})
    expect((await admin.getPool(kind, pool)).spec?.taints).to.deep.equal([{key: 'maintenance', effect: 'NoExecute'}])
  })

  it('providerID may be set once, then neither changed nor removed (as in IronCore)', async () => {
    const pool = 'ic-provider-id'
    await admin.createPool(kind, pool, {})
    await admin.patchPool(kind, pool, {spec: {providerID: 'fixture://first'}})
    const refusal = async (body: object) => {
      try {
        await admin.patchPool(kind, pool, body)
        return 'accepted'
      } catch (error) {
        return String((error as {body?: unknown}).body ?? error)
      }
    }
    expect(await refusal({spec: {providerID: 'fixture://second'}})).to.include('providerID is immutable once set')
    expect(await refusal({spec: {providerID: null}})).to.include('providerID is immutable once set')
    expect(await refusal({spec: {taints: [{key: 'k', effect: 'NoExecute'}]}})).to.equal('accepted')
    expect((await admin.getPool(kind, pool)).spec?.providerID).to.equal('fixture://first')
  })
})
