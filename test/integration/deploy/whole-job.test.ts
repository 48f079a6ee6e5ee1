/**
 * deploy/'s RBAC and admission policy are enough for the real commands to do their whole job: a
 * poollet keeps its pool Ready as its own certificate identity, the controller marks a silent pool as
 * its ServiceAccount, and neither logs a refusal.
 */
import {expect} from 'chai'
import {POOL_KIND_NAMES, POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {sharedControlPlane} from '../../support/control-plane.ts'
import {controllerIdentity, startController} from '../../support/controller-env.ts'
import {KubeObjects, readyOf} from '../../support/kube-objects.ts'
import {poolletControlPlane, startPoollet, type PoolletFixture} from '../../support/poollet-env.ts'
import {waitFor} from '../../support/wait.ts'

const refusal = /forbidden|\b403\b|denied/i

describe('deploy/ RBAC and policy: the commands do their whole job', function () {
  this.timeout(90_000)

  it('poollets of every kind keep their pools Ready, the controller marks a silent pool, and no log line is a refusal', async () => {
    const plane = await sharedControlPlane()
    await poolletControlPlane()
    await controllerIdentity(plane)
    const admin = new KubeObjects(plane.adminKubeconfig)
    const poollets: PoolletFixture[] = []
    const controller = await startController(plane)
    try {
      for (const name of POOL_KIND_NAMES) {
        const kind = POOL_KINDS[name]
        await admin.createPool(kind, `job-${name}`)
        // The test asserts they stay True: a probe deadline a busy machine keeps (FAST's 150 ms did not, at load 13).
        poollets.push(await startPoollet(plane, kind, `job-${name}`, ['--heartbeat-interval=500ms', '--heartbeat-status-timeout=400ms', '--heartbeat-lease-duration=2s']))
      }
      await admin.createPool(POOL_KINDS.machine, 'job-silent')
      for (const name of POOL_KIND_NAMES) {
        await waitFor(`job-${name} Ready True`, async () => readyOf(await admin.getPool(POOL_KINDS[name], `job-${name}`))?.status === 'True')
      }
      await waitFor('job-silent Unknown', async () => readyOf(await admin.getPool(POOL_KINDS.machine, 'job-silent'))?.status === 'Unknown')
      for (const name of POOL_KIND_NAMES) {
        expect(readyOf(await admin.getPool(POOL_KINDS[name], `job-${name}`))?.status, `job-${name} stays True`).to.equal('True')
      }
      const refusals = [controller, ...poollets.map((p) => p.poollet)].flatMap((p) => p.stderr.filter((line) => refusal.test(line)))
      expect(refusals).to.deep.equal([])
    } finally {
      await controller.stop()
      for (const p of poollets) await p.stop()
    }
  })
})
