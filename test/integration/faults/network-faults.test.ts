/**
 * The controller's verdicts when the network stalls, through a loopback proxy that stops forwarding
 * without closing anything (test/support/tcp-proxy.ts): the controller's whole connection to the API,
 * only its Lease watch and relist, or one poollet's connection. Four live pools with real poollets
 * (one of them through its own proxy), one pool whose poollet is frozen before each fault.
 */
import {expect} from 'chai'
import type {TcpProxy} from '../../support/tcp-proxy.ts'
import {waitFor} from '../../support/wait.ts'
import {fleetHooks, HEARTBEAT_MS, logLines} from './fault-fleet.ts'
import {runScenario} from './scenario.ts'

/**
 * The controller's Lease cache: its watch, and its list (pages of 500). Not the sight's probe, a list
 * with limit=1, nor the confirming read of one Lease: those keep answering, so only the watch guard
 * can see this fault.
 */
const LEASE_WATCH = /^GET \/apis\/coordination\.k8s\.io\/v1\/namespaces\/ironcore-machinepool-lease\/leases\?.*watch=true/
const LEASE_WATCH_OR_LIST = /^GET \/apis\/coordination\.k8s\.io\/v1\/namespaces\/ironcore-machinepool-lease\/leases\?(.*watch=true|.*limit=500)/

describe('faults: network stalls between the controller or a poollet and the API server', function () {
  this.timeout(180_000)
  let controllerProxy: TcpProxy | undefined
  const theFleet = fleetHooks({proxiedPoollets: 1}, async () => {
    await controllerProxy?.close()
    controllerProxy = undefined
  })

  it("the controller's connection to the API black-holed for two grace periods", async () => {
    const fleet = theFleet()
    const {kubeconfig, proxy} = await fleet.controllerKubeconfig({terminateTls: false})
    controllerProxy = proxy?.proxy
    await fleet.startController(kubeconfig)
    await runScenario(fleet, {start: () => controllerProxy?.stall(), end: () => controllerProxy?.heal()})
  })

  it('a Lease watch that ends cleanly (as at its server timeout) and whose reopening and relist hang, for two grace periods', async () => {
    const fleet = theFleet()
    const {kubeconfig, proxy} = await fleet.controllerKubeconfig({terminateTls: true})
    controllerProxy = proxy?.proxy
    await fleet.startController(kubeconfig)
    await runScenario(fleet, {
      reason: 'watch-gap',
      start: () => {
        const tls = controllerProxy as TcpProxy
        tls.stallRequests(LEASE_WATCH_OR_LIST)
        // The open watch ends as the server ends one at its timeout (a routine close, no error); what
        // the cache asks next, the watch again or a list, gets no answer.
        expect(tls.endResponses(LEASE_WATCH), 'the Lease watch ended').to.equal(1)
      },
      end: () => controllerProxy?.heal(),
    })
    // The guard was tested as meant: the cache did ask again (and got no answer) during the fault.
    expect((controllerProxy as TcpProxy).requests.filter((r) => LEASE_WATCH.test(r)).length).to.be.at.least(2)
  })

  it("a poollet's connection black-holed: its pool goes Unknown only after its renewals stopped, and comes back by itself", async () => {
    const fleet = theFleet()
    const pool = fleet.live[0] as string
    const proxy = fleet.poolletProxies.get(pool)?.proxy as TcpProxy
    await fleet.startController((await fleet.controllerKubeconfig()).kubeconfig)
    let stalledAt = 0
    let healedAt = 0
    // Back by itself, within about one interval after the heal: a deadline from the heal, generous for a busy machine.
    let back: Promise<unknown> = Promise.resolve()
    const start = await runScenario(fleet, {
      blinds: false,
      mayGoUnknown: [pool],
      start: () => {
        proxy.stall()
        stalledAt = fleet.mark('poollet stalled')
      },
      end: () => {
        proxy.heal()
        healedAt = fleet.mark('poollet healed')
        back = waitFor(`${pool} Ready=True again`, () => fleet.changes.some((c) => c.pool === pool && c.seq > healedAt && c.status === 'True'), {timeoutMs: HEARTBEAT_MS + 10_000})
        back.catch(() => {})
      },
    })
    // Its renewals stopped for two grace periods with the view whole: marked, during the stall.
    const marks = logLines(fleet.controller!, start.log).filter((l) => l.msg.includes('marked Ready=Unknown') && l.fields.pool === pool)
    expect(marks, `${pool} marked once`).to.have.length(1)
    const changes = fleet.changes.filter((c) => c.pool === pool && c.seq > stalledAt)
    const unknown = changes.find((c) => c.status === 'Unknown')
    expect(unknown, `${pool} seen Unknown`).to.not.equal(undefined)
    expect(unknown!.seq, 'Unknown only while its connection was stalled').to.be.below(healedAt)
    await back
  })
})
