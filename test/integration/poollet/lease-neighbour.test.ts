/**
 * Two heartbeat writers on one pool's Lease, on the real API server (issue 21): real `ironpool poollet`
 * processes, and a stand-in for IronCore's machinepoollet, which (upstream 0b3fd712) GETs the Lease and
 * merge-patches it without a resourceVersion each tick, taking it back whenever another holder has it.
 * Within a few intervals one holder keeps the Lease and leaseTransitions stops growing; the poollet that
 * yielded says so (log, metric, /readyz); a poollet restarted with a new identity still takes over its
 * predecessor's Lease at once. Ticks are counted by the runtimes' probe counters, never by sleeping.
 */
import {randomUUID} from 'node:crypto'
import {expect} from 'chai'
import {formatMicroTime} from '../../../src/core/conditions.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import type {CliProcess} from '../../support/cli.ts'
import {KubeObjects} from '../../support/kube-objects.ts'
import {FAST, poolletControlPlane, startPoollet, type PoolletFixture} from '../../support/poollet-env.ts'
import {waitFor} from '../../support/wait.ts'

const kind = POOL_KINDS.machine
const ARGS = [...FAST, '--metrics-bind-address=127.0.0.1:0']

/** The poollet's holder identity, from its start line. */
async function holderOf(poollet: CliProcess): Promise<string> {
  return String((await poollet.waitForLog('poollet starting')).holder)
}

async function serverOf(poollet: CliProcess): Promise<string> {
  return `http://${String((await poollet.waitForLog('serving metrics')).address)}`
}

/** Resolves once the fixture's runtime has been probed n more times: n ticks of that poollet. */
async function ticks(fixture: PoolletFixture, n: number): Promise<void> {
  const target = fixture.runtime.calls.probe + n
  await waitFor(`${n} more ticks`, () => fixture.runtime.calls.probe >= target, {timeoutMs: 30_000})
}

describe('poollet: a good neighbour on the pool Lease (real API server, real poollets)', function () {
  this.timeout(120_000)
  const fixtures: PoolletFixture[] = []
  let standIn: {stop: () => Promise<void>} | undefined
  afterEach(async () => {
    await standIn?.stop()
    standIn = undefined
    for (const fixture of fixtures.splice(0)) await fixture.stop()
  })

  it('two poollets of different identities: the first yields to the second, says so, and leaseTransitions stops growing; a successor with a new identity takes over at once', async () => {
    const plane = await poolletControlPlane()
    const admin = new KubeObjects(plane.adminKubeconfig)
    const pool = `neighbour-${Date.now()}`
    await admin.createPool(kind, pool)
    const a = await startPoollet(plane, kind, pool, ARGS)
    fixtures.push(a)
    const holderA = await holderOf(a.poollet)
    await waitFor('A holds the Lease', async () => (await admin.getLease(kind, pool))?.spec?.holderIdentity === holderA, {timeoutMs: 30_000})

    const b = await startPoollet(plane, kind, pool, ARGS)
    fixtures.push(b)
    const holderB = await holderOf(b.poollet)
    // B came to a Lease held by another: a predecessor as far as it can tell, taken over at once.
    await b.poollet.waitForLog(`took over lease ${kind.leaseNamespace}/${pool} from ${holderA}`)
    const yielded = await a.poollet.waitForLog(`is renewed by another holder, ${holderB}`)
    expect(yielded.level === 50 || yielded.level === 'error').to.be.true
    const settled = (await admin.getLease(kind, pool))?.spec
    await ticks(b, 10)
    await ticks(a, 3)
    const later = (await admin.getLease(kind, pool))?.spec
    expect(later?.holderIdentity).to.equal(holderB)
    expect(later?.leaseTransitions).to.equal(settled?.leaseTransitions)
    expect(String(later?.renewTime)).not.to.equal(String(settled?.renewTime)) // B renews it
    // A said it once, and shows it on its metrics address.
    expect(a.poollet.logs().filter((l) => String(l.msg).includes('is renewed by another holder'))).to.have.length(1)
    const server = await serverOf(a.poollet)
    expect(await (await fetch(`${server}/metrics`)).text()).to.match(/^ironpool_poollet_lease_yielded 1$/m)
    const readyz = await fetch(`${server}/readyz/lease`)
    expect(readyz.status).to.equal(500)
    expect(await readyz.text()).to.include(`yielded to ${holderB}`)
    expect((await fetch(`${await serverOf(b.poollet)}/readyz`)).status).to.equal(200)

    // B stops for good; its successor (a new identity) takes its Lease over at once, as IEP-15 says,
    // and keeps it: A, still yielding, sees the Lease renewed and stays out.
    await b.stop()
    fixtures.splice(fixtures.indexOf(b), 1)
    const c = await startPoollet(plane, kind, pool, ARGS)
    fixtures.push(c)
    const holderC = await holderOf(c.poollet)
    await c.poollet.waitForLog(`took over lease ${kind.leaseNamespace}/${pool} from ${holderB}`, {}, 10_000)
    await ticks(c, 8)
    expect((await admin.getLease(kind, pool))?.spec?.holderIdentity).to.equal(holderC)
    expect(c.poollet.logs().filter((l) => String(l.msg).includes('is renewed by another holder'))).to.have.length(0)
  })

  it('beside a stand-in for IronCore’s machinepoollet (GET + merge patch, takes the Lease back each tick): the poollet yields, the stand-in keeps the Lease', async () => {
    const plane = await poolletControlPlane()
    const admin = new KubeObjects(plane.adminKubeconfig)
    const pool = `machinepoollet-${Date.now()}`
    await admin.createPool(kind, pool)
    const identity = `${pool}_${randomUUID()}`
    let beats = 0
    let stopped = false
    // As controllers/machinepool_heartbeat.go: every interval, GET; create, or merge-patch renewTime,
    // and take the Lease back (holder, acquireTime, transitions + 1) whenever another holder has it.
    const loop = (async () => {
      while (!stopped) {
        await beat().catch((error: unknown) => process.stderr.write(`stand-in: ${String(error)}\n`))
        await new Promise((resolve) => setTimeout(resolve, 300))
      }
    })()
    async function beat(): Promise<void> {
        const now = formatMicroTime(new Date())
        const lease = await admin.getLease(kind, pool)
        if (lease === undefined) await admin.createLease(kind, pool, {holderIdentity: identity, leaseDurationSeconds: 2, acquireTime: now, renewTime: now, leaseTransitions: 0} as never)
        else if (lease.spec?.holderIdentity !== identity) await admin.patchLease(kind, pool, {holderIdentity: identity, leaseDurationSeconds: 2, acquireTime: now, renewTime: now, leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + 1})
        else await admin.patchLease(kind, pool, {renewTime: now})
        beats++
    }
    standIn = {
      stop: async () => {
        stopped = true
        await loop
      },
    }
    await waitFor('the stand-in holds the Lease', () => beats >= 1, {timeoutMs: 30_000})

    const p = await startPoollet(plane, kind, pool, ARGS)
    fixtures.push(p)
    await p.poollet.waitForLog(`is renewed by another holder, ${identity}`)
    const settled = (await admin.getLease(kind, pool))?.spec
    await ticks(p, 10)
    const later = (await admin.getLease(kind, pool))?.spec
    expect(later?.holderIdentity).to.equal(identity)
    expect(later?.leaseTransitions).to.equal(settled?.leaseTransitions)
    // One takeover each way at most: the poollet's at start (it could not yet tell a rival from a predecessor), the stand-in's back.
    expect(later?.leaseTransitions).to.be.at.most(2)
    expect(await (await fetch(`${await serverOf(p.poollet)}/metrics`)).text()).to.match(/^ironpool_poollet_lease_yielded 1$/m)

    // The stand-in stops: its Lease (2 s) expires on the poollet's clock, and the poollet beats again.
    await standIn.stop()
    standIn = undefined
    await p.poollet.waitForLog(`from ${identity}, which left it unrenewed for its lease duration`, {}, 20_000)
    await waitFor('the yield is over on /metrics', async () => /^ironpool_poollet_lease_yielded 0$/m.test(await (await fetch(`${await serverOf(p.poollet)}/metrics`)).text()), {timeoutMs: 10_000})
  })
})
