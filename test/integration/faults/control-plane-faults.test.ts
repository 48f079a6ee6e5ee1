/**
 * The controller's verdicts while the control plane stalls or dies, on its own real control plane: four
 * live pools with real poollets, one pool whose poollet is frozen before each fault, the real controller.
 * For each fault: no live pool is ever Unknown, the frozen one is marked once the view is whole again,
 * and the controller never exits.
 */
import {expect} from 'chai'
import {etcdAlarms, fillEtcdNearQuota, fillEtcdToQuota, recoverFromNoSpace} from '../../support/etcd-maintenance.ts'
import {FaultFleet, hold} from './fault-fleet.ts'
import {runScenario} from './scenario.ts'

/** etcd's space quota for this fleet: room for every scenario's writes, small enough to fill in seconds. */
const ETCD_QUOTA_BYTES = 64 * 1024 * 1024
/**
 * What is left of the quota when the scenario's clock starts: the last few puts, well under the grace
 * period, and more than the fleet's own writes add while it prepares.
 */
const ETCD_HEADROOM_BYTES = 8 * 1024 * 1024

describe('faults: the controller, kube-apiserver and etcd stalled or killed', function () {
  this.timeout(180_000)
  let fleet: FaultFleet

  before(async function () {
    this.timeout(180_000)
    fleet = await FaultFleet.start({etcdArgs: [`--quota-backend-bytes=${ETCD_QUOTA_BYTES}`]})
    await fleet.startController((await fleet.controllerKubeconfig()).kubeconfig)
  })

  after(async function () {
    this.timeout(60_000)
    await fleet?.stop()
  })

  it('the controller paused (SIGSTOP) for two grace periods', async () => {
    const child = () => fleet.controller?.child
    await runScenario(fleet, {start: () => void child()?.kill('SIGSTOP'), end: () => void child()?.kill('SIGCONT')})
  })

  it('kube-apiserver paused for two grace periods', async () => {
    await runScenario(fleet, {start: () => fleet.plane.pauseApiServer(), end: () => fleet.plane.resumeApiServer()})
  })

  it('etcd paused for two grace periods', async () => {
    await runScenario(fleet, {start: () => fleet.plane.pauseEtcd(), end: () => fleet.plane.resumeEtcd()})
  })

  it('kube-apiserver paused in bursts each shorter than three failed probes take (0.7 s of every 1.01 s, for 60 s): no live pool marked', async () => {
    // The review's first break on real processes: each burst outlasts a poollet's request deadline
    // (500 ms) and none is long enough for the probes' threshold. The poollets retry at once and land
    // as each burst ends; the controller sees each burst longer than a request deadline as blindness.
    let bursts = 0
    await runScenario(fleet, {
      blinds: false,
      start: async () => {
        const until = Date.now() + 60_000
        while (Date.now() < until) {
          fleet.plane.pauseApiServer()
          await hold(700)
          fleet.plane.resumeApiServer()
          await hold(310)
          bursts++
        }
      },
      end: () => fleet.plane.resumeApiServer(),
    })
    console.log(`      ${bursts} bursts`)
  })

  it('etcd out of space (its NOSPACE alarm: every write refused, reads answer), then compacted, defragmented and disarmed: no live pool marked', async () => {
    // The review's third break: the sight only read, so the poollets' refused renewals counted as
    // silence. Filled to its real quota, etcd refuses every write (kube-apiserver answers 500
    // "database space exceeded") while reads are served; the controller's write probe sees it. Most of
    // the filler goes in before the frozen poollet's clock starts: at 1 MiB a put, 60 MiB took longer
    // than the grace period on a busy machine, and the frozen pool was rightly marked before the fault.
    let filler = 0
    await runScenario(fleet, {
      setUp: async () => {
        filler = await fillEtcdNearQuota(fleet.plane.etcdUrl, ETCD_QUOTA_BYTES, ETCD_HEADROOM_BYTES)
      },
      start: async () => {
        filler = await fillEtcdToQuota(fleet.plane.etcdUrl, filler)
        expect(await etcdAlarms(fleet.plane.etcdUrl)).to.deep.equal(['NOSPACE'])
        // Reads answer all along: the fault is writes refused, not an API down.
        expect((await fleet.listPools()).length).to.be.above(0)
      },
      end: () => recoverFromNoSpace(fleet.plane.etcdUrl),
    })
    expect(await etcdAlarms(fleet.plane.etcdUrl)).to.deep.equal([])
    console.log(`      ${filler} MiB of filler to reach the ${ETCD_QUOTA_BYTES / 1024 / 1024} MiB quota`)
  })

  it('kube-apiserver killed (SIGKILL) and restarted', async () => {
    await runScenario(fleet, {start: () => fleet.plane.stopApiServer('SIGKILL'), end: () => fleet.plane.startApiServer()})
  })

  it('etcd killed (SIGKILL) and restarted', async () => {
    await runScenario(fleet, {start: () => fleet.plane.stopEtcd('SIGKILL'), end: () => fleet.plane.startEtcd()})
  })
})

