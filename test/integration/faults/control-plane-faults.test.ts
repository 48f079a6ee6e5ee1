/**
 * The controller's verdicts while the control plane stalls or dies, on its own real control plane: four
 * live pools with real poollets, one pool whose poollet is frozen before each fault, the real controller.
 * For each fault: no live pool is ever Unknown, the frozen one is marked once the view is whole again,
 * and the controller never exits.
 */
import {FaultFleet} from './fault-fleet.ts'
import {runScenario} from './scenario.ts'

describe('faults: the controller, kube-apiserver and etcd stalled or killed', function () {
  this.timeout(180_000)
  let fleet: FaultFleet

  before(async function () {
    this.timeout(180_000)
    fleet = await FaultFleet.start()
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

  it('kube-apiserver killed (SIGKILL) and restarted', async () => {
    await runScenario(fleet, {start: () => fleet.plane.stopApiServer('SIGKILL'), end: () => fleet.plane.startApiServer()})
  })

  it('etcd killed (SIGKILL) and restarted', async () => {
    await runScenario(fleet, {start: () => fleet.plane.stopEtcd('SIGKILL'), end: () => fleet.plane.startEtcd()})
  })
})

