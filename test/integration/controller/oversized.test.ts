/**
 * Issue 29, "oversized answers never blind", on a real kube-apiserver: with the admission policy
 * removed (an admin wrote them), 24 Leases of 1.45 MB each in the machine pools' lease namespace, 35 MB
 * in all, more than the controller's 32 MiB answer cap for one list page. Before, every Lease list
 * failed ("answer larger than 33554432 bytes"), the view was never whole and no dead pool was marked.
 * Now the controller reaches a whole view (its list asks again for half as many, and leaves each
 * object over the limit of one object out), marks a dead pool within its grace period, leaves a live
 * one alone, and names every oversized Lease in a log line, an Event and a metric; one padded later
 * arrives by the watch and is reported the same way, without a blind spell.
 */
import {expect} from 'chai'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {OVERSIZED_OBJECT_REASON} from '../../../src/app/oversized-reports.ts'
import {DEPLOY_DIR, installCrds} from '../../support/control-plane.ts'
import type {ControllerProcess} from '../../support/controller-env.ts';
import { GRACE_MS, controllerIdentity, keepRenewing, startController} from '../../support/controller-env.ts'
import {KubeObjects} from '../../support/kube-objects.ts'
import {waitFor} from '../../support/wait.ts'
import {FakeLogger} from '../../support/fake-logger.ts'
import {createLeaseSnapshot} from '../../../src/kube/watch/caches/lease-snapshot.ts'
import {loadKubeConfig} from '../../../src/kube/http/kubeconfig.ts'
import {formatMicroTime} from '../../../src/core/conditions.ts'
import type {V1Lease} from '@kubernetes/client-node'

const kind = POOL_KINDS.machine
const PADDED = Array.from({length: 24}, (_, i) => `padded-${String(i).padStart(2, '0')}`)
/** 1.45 MB of holderIdentity: under etcd's 1.5 MiB request limit, far over the 256 KiB of one object. */
const PAD = 'x'.repeat(1_450_000)
const RESOURCE = `leases ${kind.leaseNamespace}`
/** Dead together: more than the 16 confirms that make the engine confirm them with one list of every Lease. */
const DEAD = ['dead', ...Array.from({length: 20}, (_, i) => `dead-${String(i).padStart(2, '0')}`)]

describe('ironpool controller: Leases too large for a list page (real API server, issue 29)', function () {
  this.timeout(300_000)
  let plane: ControlPlane
  let admin: KubeObjects
  let controller: ControllerProcess | undefined
  let alive: {stop(): Promise<void>} | undefined

  before(async function () {
    this.timeout(180_000)
    plane = await ControlPlane.start()
    await installCrds(plane)
    await controllerIdentity(plane)
    // "With the policy removed": whatever it bounds, these objects reach etcd.
    await plane.kubectl(['delete', '--ignore-not-found', '-k', `${DEPLOY_DIR}policies`])
    admin = new KubeObjects(plane.adminKubeconfig)
    for (const name of PADDED) await admin.createLease(kind, name, {holderIdentity: `${name}_${PAD}`, leaseDurationSeconds: 40, renewTime: formatMicroTime(new Date())} as unknown as V1Lease['spec'])
    for (const name of ['alive', ...DEAD]) await admin.createPool(kind, name)
  })

  after(async function () {
    this.timeout(60_000)
    await alive?.stop()
    await controller?.stop()
    await plane?.stop()
  })

  it('reaches a whole view, marks the dead pools (confirmed by one list of every Lease) and not the live one, and reports each oversized Lease by name in a log line, an Event and a metric', async () => {
    alive = keepRenewing(admin, kind, 'alive')
    for (const name of DEAD) await admin.renewLease(kind, name, formatMicroTime(new Date()))
    controller = await startController(plane, ['--kinds=machine'])
    const ctl = controller
    try {
      await waitFor("the controller's view whole", () => ctl.logs().some((l) => String(l.msg).startsWith('view whole')), {timeoutMs: 60_000})
      // The dead pools' one renewal is older than grace soon after: they are marked within grace and a
      // little, confirmed together by one list of every Lease, the padded ones among them.
      await waitFor('the dead pools marked', () => DEAD.every((name) => ctl.marked().includes(name)), {timeoutMs: GRACE_MS * 5 + 20_000})
      expect(ctl.marked().sort()).to.deep.equal([...DEAD].sort())

      const reported = () => ctl.logs().filter((l) => String(l.msg).startsWith('object larger than the limit of one object')).map((l) => String(l.key))
      expect(reported().sort()).to.deep.equal(PADDED.map((n) => `${kind.leaseNamespace}/${n}`))
      expect(await ctl.metric(`ironpool_cache_oversized_objects{resource="${RESOURCE}"}`)).to.equal(PADDED.length)
      expect(await ctl.metric(`ironpool_cache_oversized_object_bytes{resource="${RESOURCE}",object="${kind.leaseNamespace}/padded-07"}`)).to.be.greaterThan(1_450_000)
      await waitFor('an Event naming each', async () => (await oversizedEvents(plane)).length === PADDED.length, {timeoutMs: 20_000})
      expect((await oversizedEvents(plane)).some((m) => m.startsWith(`${RESOURCE}: ${kind.leaseNamespace}/padded-03 is `))).to.equal(true)

      // One more padded by the watch: the Lease of the live pool's neighbour, written after the list.
      const spells = await ctl.metric(`ironpool_controller_blind_spells_total{kind="machine",reason="watch-gap"}`)
      await admin.createLease(kind, 'late', {holderIdentity: 'late_small', leaseDurationSeconds: 40, renewTime: formatMicroTime(new Date())} as unknown as V1Lease['spec'])
      await admin.patchLease(kind, 'late', {holderIdentity: `late_${PAD}`})
      await waitFor('the padded update reported', () => reported().includes(`${kind.leaseNamespace}/late`))
      expect(await ctl.metric(`ironpool_cache_oversized_objects{resource="${RESOURCE}"}`)).to.equal(PADDED.length + 1)
      // Deleted: no longer reported as left out.
      await admin.deleteLease(kind, 'late')
      await waitFor('the deleted one cleared', async () => (await ctl.metric(`ironpool_cache_oversized_objects{resource="${RESOURCE}"}`)) === PADDED.length)
      expect(await ctl.metric(`ironpool_controller_blind_spells_total{kind="machine",reason="watch-gap"}`)).to.equal(spells)
      expect(await ctl.metric('ironpool_controller_view_whole{kind="machine"}')).to.equal(1)
      expect(ctl.logs().filter((l) => String(l.msg).startsWith('list failed'))).to.deep.equal([])
      expect(ctl.marked().sort()).to.deep.equal([...DEAD].sort())
    } catch (error) {
      console.log(`      --- controller log (last lines):\n${ctl.stderr.slice(-30).join('\n').slice(0, 20_000)}`)
      throw error
    }
  })
})

describe('the batched confirmation of due pools with the same Leases (real API server, issue 29)', function () {
  this.timeout(300_000)
  let plane: ControlPlane

  before(async function () {
    this.timeout(180_000)
    plane = await ControlPlane.start()
    await installCrds(plane)
    await controllerIdentity(plane)
    await plane.kubectl(['delete', '--ignore-not-found', '-k', `${DEPLOY_DIR}policies`])
    const admin = new KubeObjects(plane.adminKubeconfig)
    for (const name of PADDED) await admin.createLease(kind, name, {holderIdentity: `${name}_${PAD}`, leaseDurationSeconds: 40, renewTime: formatMicroTime(new Date())} as unknown as V1Lease['spec'])
    for (const name of DEAD) await admin.renewLease(kind, name, formatMicroTime(new Date()))
  })

  after(async function () {
    this.timeout(60_000)
    await plane?.stop()
  })

  it('one consistent list of every Lease answers, without the oversized ones, instead of failing past the 32 MiB cap', async () => {
    const list = createLeaseSnapshot(loadKubeConfig({kubeconfig: plane.adminKubeconfig}), kind.leaseNamespace, 20_000, new FakeLogger())
    const leases = await list(AbortSignal.timeout(30_000))
    expect(leases.map((l) => l.name).sort()).to.deep.equal([...DEAD].sort())
    expect(leases.every((l) => l.namespace === kind.leaseNamespace && l.spec.renewTime !== undefined)).to.equal(true)
    // Asked for a batch's names, it keeps only those it found (an oversized one stays out, as in the cache).
    const asked = new Set([DEAD[0]!, PADDED[0]!, 'no-such-lease'])
    expect((await list(AbortSignal.timeout(30_000), asked)).map((l) => l.name)).to.deep.equal([DEAD[0]])
  })
})

async function oversizedEvents(plane: ControlPlane): Promise<string[]> {
  const out = await plane.kubectl(['get', 'events', '-A', '--field-selector', `reason=${OVERSIZED_OBJECT_REASON}`, '-o', 'json'])
  return (JSON.parse(out) as {items: {message: string}[]}).items.map((e) => e.message)
}
