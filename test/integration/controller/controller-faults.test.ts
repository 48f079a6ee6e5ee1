/**
 * The controller under faults: an API server outage longer than the grace period, leader election
 * between two replicas, a missing CRD, bad flags.
 */
import {expect} from 'chai'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {runCli} from '../../support/cli.ts'
import {sharedControlPlane} from '../../support/control-plane.ts'
import type {ControllerProcess} from '../../support/controller-env.ts';
import { GRACE_MS, controllerIdentity, keepRenewing, startController} from '../../support/controller-env.ts'
import {KubeObjects, readyOf} from '../../support/kube-objects.ts'
import {waitFor} from '../../support/wait.ts'

const kind = POOL_KINDS.machine

describe('ironpool controller under faults', function () {
  this.timeout(120_000)

  describe('on its own control plane', () => {
    let plane: ControlPlane
    let controller: ControllerProcess | undefined

    before(async () => {
      plane = await ControlPlane.start()
    })
    after(async () => {
      await controller?.stop()
      await plane?.stop()
    })

    it('refuses to start when a named kind has no CRD, naming the CRD', async () => {
      // Before deploy/ is applied: the API does not serve machinepools.
      const result = await runCli(['controller', `--kubeconfig=${plane.adminKubeconfig}`, '--kinds=machine', '--metrics-bind-address=0', '--health-probe-bind-address=0', '--log-format=json'])
      expect(result.code).to.equal(1)
      expect(result.stderr).to.include('is the CRD machinepools.compute.ironcore.dev installed?')
    })

    it('marks no pool because of an API server outage longer than the grace period, and still marks a pool that really went silent', async () => {
      await controllerIdentity(plane)
      const admin = new KubeObjects(plane.adminKubeconfig)
      await admin.createPool(kind, 'alive')
      await admin.createPool(kind, 'dies')
      const alive = keepRenewing(admin, kind, 'alive')
      const dying = keepRenewing(admin, kind, 'dies')
      try {
        controller = await startController(plane, ['--kinds=machine'])
        await waitFor('both Leases seen', async () => (await admin.getLease(kind, 'alive')) && (await admin.getLease(kind, 'dies')))
        await plane.stopApiServer()
        // Down for three grace periods.
        const downSince = Date.now()
        await waitFor('three grace periods of outage', () => Date.now() - downSince > 3 * GRACE_MS)
        await dying.stop()
        await plane.startApiServer()
        await waitFor('the silent pool marked after the outage', async () => readyOf(await admin.getPool(kind, 'dies'))?.status === 'Unknown', {timeoutMs: 30_000})
        expect(readyOf(await admin.getPool(kind, 'alive'))?.status).to.equal(undefined)
        // The Unknown can be read before the controller's log line about it has come through its pipe.
        await controller.waitForLog('marked Ready=Unknown', {pool: 'dies'})
        expect(controller.marked()).to.deep.equal(['dies'])
      } finally {
        await alive.stop()
        await dying.stop()
      }
    })
  })

  describe('with --max-unhealthy, on its own control plane', () => {
    let plane: ControlPlane
    before(async () => {
      plane = await ControlPlane.start()
    })
    after(async () => {
      await plane?.stop()
    })

    it('marks none while more pools are stale than allowed, says so in the log and an Event, and resumes when fewer are', async () => {
      await controllerIdentity(plane)
      const admin = new KubeObjects(plane.adminKubeconfig)
      for (const name of ['quiet-1', 'quiet-2', 'quiet-3']) await admin.createPool(kind, name)
      const controller = await startController(plane, ['--kinds=machine', '--max-unhealthy=1'])
      const renewers: ReturnType<typeof keepRenewing>[] = []
      try {
        await controller.waitForLog('too many pools stale at once')
        const event = await waitFor('the breaker Event on the CRD', async () => {
          const out = await plane.kubectl(['get', 'events', '-n', 'default', '--field-selector', 'reason=MaxUnhealthyExceeded', '-o', 'jsonpath={.items[*].message}'])
          return out || undefined
        })
        expect(event).to.include('3 of 3 machinepools stale at once')
        expect(controller.marked()).to.deep.equal([])
        // Two come back: one stale pool is within --max-unhealthy=1, so it is marked.
        renewers.push(keepRenewing(admin, kind, 'quiet-1'), keepRenewing(admin, kind, 'quiet-2'))
        await waitFor('quiet-3 marked once the breaker closed', () => controller.marked().includes('quiet-3'), {timeoutMs: 20_000})
        await controller.waitForLog('marking resumes')
        expect(controller.marked()).to.deep.equal(['quiet-3'])
      } finally {
        for (const r of renewers) await r.stop()
        await controller.stop()
      }
    })
  })

  describe('with leader election', () => {
    it('lets one of two replicas write; when the leader is killed the other takes over within the lease duration, with no false Unknown', async () => {
      const plane = await sharedControlPlane()
      const admin = new KubeObjects(plane.adminKubeconfig)
      await controllerIdentity(plane)
      // The default election id: deploy/'s RBAC lets the controller touch only that Lease.
      const id = `le-${Date.now()}`
      const leaderArgs = ['--leader-elect', '--leader-elect-lease-duration=2s', '--leader-elect-renew-deadline=1500ms', '--leader-elect-retry-period=200ms', '--kinds=machine']
      const alive = keepRenewing(admin, kind, `${id}-alive`)
      await admin.createPool(kind, `${id}-alive`)
      const replicas = [await startController(plane, leaderArgs), await startController(plane, leaderArgs)]
      try {
        const leaderIndex = await waitFor('a leader', () => {
          const i = replicas.findIndex((r) => r.logs().some((l) => String(l.msg).includes('started leading')))
          return i >= 0 ? i : undefined
        })
        const leader = replicas[leaderIndex] as ControllerProcess
        const standby = replicas[1 - leaderIndex] as ControllerProcess
        await admin.createPool(kind, `${id}-first`)
        await waitFor('the leader marks a silent pool', () => leader.marked().includes(`${id}-first`))
        expect(standby.marked()).to.deep.equal([])
        expect(standby.logs().some((l) => String(l.msg).includes('started leading'))).to.be.false

        leader.child.kill('SIGKILL')
        await leader.exited
        const killedAt = Date.now()
        await waitFor('the standby to lead', () => standby.logs().some((l) => String(l.msg).includes('started leading')), {timeoutMs: 10_000})
        const tookOverMs = Date.now() - killedAt
        console.log(`      standby took over ${tookOverMs} ms after the leader was killed (lease 2s, retry 200ms)`)
        await admin.createPool(kind, `${id}-second`)
        await waitFor('the new leader marks a silent pool', () => standby.marked().includes(`${id}-second`))
        expect(standby.marked()).to.not.include(`${id}-alive`)
        expect(readyOf(await admin.getPool(kind, `${id}-alive`))?.status).to.equal(undefined)
      } catch (error) {
        for (const r of replicas) console.log(r.stderr.slice(-15).join('\n'))
        throw error
      } finally {
        await alive.stop()
        for (const r of replicas) await r.stop()
      }
    })
  })

  describe('flags', () => {
    const refusals: [string, string[], string][] = [
      ['a zero grace period', ['--grace-period=0s'], '--grace-period'],
      ['an unknown kind', ['--kinds=machine,network'], 'network'],
      ['a bad --max-unhealthy', ['--max-unhealthy=150%'], '--max-unhealthy'],
      ['leader timings out of order', ['--leader-elect', '--leader-elect-renew-deadline=20s'], '--leader-elect-lease-duration'],
      ['an unparsable duration', ['--grace-period=soon'], 'soon'],
      ['a request rate that is no number', ['--qps=fast'], '--qps "fast" must be a number > 0'],
      ['a burst of none', ['--burst=0'], '--burst 0 must be an integer >= 1'],
    ]
    for (const [what, args, mention] of refusals) {
      it(`exits 2 naming the rule for ${what}`, async () => {
        const result = await runCli(['controller', ...args])
        expect(result.code, result.stderr).to.equal(2)
        expect(result.stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ')).to.include(mention)
      })
    }

    it('serves /healthz and /readyz, bounds its requests by --qps and --burst, and exits 0 on SIGTERM', async () => {
      const plane = await sharedControlPlane()
      const controller = await startController(plane, ['--kinds=machine', '--qps=250', '--burst=500'])
      try {
        // The limiter the engine uses is the one the start line reports (app/controller.ts logs the object it built).
        expect((await controller.waitForLog('controller starting')).requestLimits).to.deep.equal({qps: 250, burst: 500, concurrency: 250})
        const line = await controller.waitForLog('serving health-probes')
        const base = `http://${String(line.address)}`
        expect((await fetch(`${base}/healthz`)).status).to.equal(200)
        await waitFor('/readyz 200 once the caches are whole', async () => (await fetch(`${base}/readyz`)).status === 200)
      } finally {
        expect((await controller.stop()).code).to.equal(0)
      }
    })
  })
})
