/**
 * How the controller tells of its own blindness: a paused kube-apiserver turns /readyz false and the
 * view metric 0, a log line says why, and once the view is whole again a ControllerViewRestored Event
 * on the kind's CRD says for how long, which `pool status` shows to the operator. A live pool is not
 * marked meanwhile.
 */
import {expect} from 'chai'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {runCli} from '../../support/cli.ts'
import {controllerIdentity, keepRenewing, startController, type ControllerProcess} from '../../support/controller-env.ts'
import {KubeObjects, readyOf} from '../../support/kube-objects.ts'
import {waitFor} from '../../support/wait.ts'

const kind = POOL_KINDS.machine

describe('ironpool controller: reporting its own blindness', function () {
  this.timeout(120_000)
  let plane: ControlPlane
  let controller: ControllerProcess | undefined

  before(async () => {
    plane = await ControlPlane.start()
    await controllerIdentity(plane)
  })
  after(async () => {
    await controller?.stop()
    await plane?.stop()
  })

  it('a paused API server: /readyz false and view_whole 0 while it lasts, a log line each way, then an Event that pool status shows; no false Unknown', async () => {
    const admin = new KubeObjects(plane.adminKubeconfig)
    await admin.createPool(kind, 'alive')
    const alive = keepRenewing(admin, kind, 'alive')
    try {
      controller = await startController(plane, ['--kinds=machine', '--grace-period=3s'])
      const probes = `http://${String((await controller.waitForLog('serving health-probes')).address)}`
      await waitFor('/readyz 200 once the view is whole', async () => (await fetch(`${probes}/readyz`)).status === 200, {timeoutMs: 30_000})
      expect(await controller.metric('ironpool_controller_view_whole{kind="machine"}')).to.equal(1)

      plane.pauseApiServer()
      try {
        await controller.waitForLog('view not whole', {kind: 'machine', reason: 'api-unanswered'}, 20_000)
        expect((await fetch(`${probes}/readyz`)).status).to.equal(500)
        // The aggregate withholds reasons, as Kubernetes does; the check's own path tells.
        const view = await fetch(`${probes}/readyz/view`)
        expect(view.status).to.equal(500)
        expect(await view.text()).to.include('view not whole for machine (api-unanswered)')
        expect(await controller.metric('ironpool_controller_view_whole{kind="machine"}')).to.equal(0)
        // Longer than the grace period: the live pool's renewals are not reaching anyone.
        const since = Date.now()
        await waitFor('two grace periods of outage', () => Date.now() - since > 6_000, {timeoutMs: 10_000})
      } finally {
        plane.resumeApiServer()
      }

      const whole = await controller.waitForLog('view whole again', {kind: 'machine', reason: 'api-unanswered'}, 30_000)
      expect(whole.reasons).to.include('api-unanswered')
      await waitFor('/readyz 200 again', async () => (await fetch(`${probes}/readyz`)).status === 200, {timeoutMs: 30_000})
      expect(await controller.metric('ironpool_controller_blind_seconds_total{kind="machine",reason="api-unanswered"}')).to.be.above(0)
      expect(await controller.metric('ironpool_controller_blind_spells_total{kind="machine",reason="api-unanswered"}')).to.be.at.least(1)

      const status = await waitFor('pool status notes the blind spell', async () => {
        const result = await runCli(['pool', 'status', `--kubeconfig=${plane.adminKubeconfig}`, '--kind=machine'])
        return result.stderr.includes("note: the controller's view of machinepools was not whole for") ? result : undefined
      }, {timeoutMs: 30_000})
      expect(status.code).to.equal(0)
      // The watches resumed from their resourceVersion: the outage did not count as silence, nothing restarted.
      expect(status.stderr).to.match(/\(api-unanswered[^)]*\); that time did not count as silence/)

      // Two more grace periods: the live pool keeps renewing and is never marked.
      const since = Date.now()
      await waitFor('two grace periods after the outage', () => Date.now() - since > 6_000, {timeoutMs: 10_000})
      expect(readyOf(await admin.getPool(kind, 'alive'))?.status).to.equal(undefined)
      expect(controller.marked()).to.deep.equal([])
      expect(controller.child.exitCode).to.equal(null)
    } finally {
      await alive.stop()
    }
  })
})
