/**
 * A mass death on a real kube-apiserver (issue 18): 400 pools renewed by a load generator (each every
 * 2 s, at its own phase) stop at once. The controller talks to the API through the test proxy (TLS
 * terminated: it records every response's status), so that its 429s are counted where they arrive.
 * It must mark all 400 within grace + a few seconds, draw no 429 and have no blind spell (its confirms
 * and writes go out at a bounded concurrency and rate), and log, Event and count exactly 400 marks,
 * each once: a mark that lands is reported even if its request was slow.
 */
import {KubeConfig} from '@kubernetes/client-node'
import {expect} from 'chai'
import path from 'node:path'
import {LeaseLoad} from '../../../bench/support/lease-load.ts'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import type {Pool} from '../../../src/core/types.ts'
import {apiRequest} from '../../../src/kube/http/api-request.ts'
import {loadKubeConfig} from '../../../src/kube/http/kubeconfig.ts'
import {installCrds} from '../../support/control-plane.ts'
import {ControllerProcess, controllerIdentity} from '../../support/controller-env.ts'
import {KubeObjects} from '../../support/kube-objects.ts'
import {proxyKubeconfig, type ProxiedKubeconfig} from '../../support/tcp-proxy.ts'
import {waitFor} from '../../support/wait.ts'
import {seedReadyPools} from '../faults/fault-fleet.ts'

const kind = POOL_KINDS.machine
const POOLS = 400
const RENEW_MS = 2_000
/** Four renewals per grace period: the generator keeps 200 renewals/s on a busy machine. */
const GRACE_MS = 8_000
/** The stated bound: every pool marked within grace + this, counted from the moment all renewals stopped. */
const SLACK_MS = 10_000

describe('ironpool controller: 400 pools die at once (real API server)', function () {
  this.timeout(300_000)
  let plane: ControlPlane
  let load: LeaseLoad | undefined
  let proxied: ProxiedKubeconfig | undefined
  let controller: ControllerProcess | undefined
  const names = Array.from({length: POOLS}, (_, i) => `mass-${String(i).padStart(3, '0')}`)

  before(async function () {
    this.timeout(180_000)
    plane = await ControlPlane.start()
    await installCrds(plane)
    const identity = await controllerIdentity(plane)
    await seedReadyPools(new KubeObjects(plane.adminKubeconfig), names)
    const admin = new KubeConfig()
    admin.loadFromFile(plane.adminKubeconfig)
    load = new LeaseLoad({kubeConfig: admin, namespace: kind.leaseNamespace, names, intervalMs: RENEW_MS, concurrency: 16})
    load.start()
    proxied = await proxyKubeconfig(identity.kubeconfig, path.join(plane.dir, 'controller-proxied.kubeconfig'), {terminateTls: true})
  })

  after(async function () {
    this.timeout(60_000)
    await controller?.stop()
    await load?.close()
    await proxied?.proxy.close()
    await plane?.stop()
  })

  it('marks all 400 within grace + 10 s, with no 429 and no blind spell, and logs, Events and counts exactly 400 marks', async () => {
    controller = new ControllerProcess([
      'controller',
      `--kubeconfig=${proxied!.kubeconfig}`,
      `--grace-period=${GRACE_MS}ms`,
      '--kinds=machine',
      '--metrics-bind-address=127.0.0.1:0',
      '--health-probe-bind-address=127.0.0.1:0',
      '--log-format=json',
      '--log-level=info',
    ])
    const ctl = controller
    await ctl.waitForLog('controller starting', {}, 30_000)
    await waitFor("the controller's view whole", () => ctl.logs().some((l) => String(l.msg).startsWith('view whole')), {timeoutMs: 60_000})
    // Every pool renewed at least once while the controller watched: each has been seen alive.
    const renewals = load!.renewals
    await waitFor('a full round of renewals seen by the controller', () => load!.renewals >= renewals + POOLS, {timeoutMs: 30_000})
    const spells = async () => sumSeries(await metricsText(ctl), `ironpool_controller_blind_spells_total{kind="${kind.name}"`)
    const spellsBefore = await spells()
    const logFrom = ctl.stderr.length

    load!.stop(names)
    const deadline = Date.now() + GRACE_MS + SLACK_MS
    const marked = () => new Set(ctl.logs().filter((l) => String(l.msg).includes('marked Ready=Unknown')).map((l) => String(l.pool)))
    try {
      await waitFor(`all ${POOLS} marked`, () => marked().size === POOLS, {timeoutMs: Math.max(0, deadline - Date.now()), intervalMs: 100})
      // The API agrees, and every Event is written.
      await waitFor(`all ${POOLS} Unknown in the API`, async () => (await unknownPools(plane)).length === POOLS, {timeoutMs: 30_000, intervalMs: 500})
      await waitFor(`${POOLS} Events`, async () => (await unknownEvents(plane)) >= POOLS, {timeoutMs: 30_000, intervalMs: 500})
      // One grace period more: a late duplicate (a mark reported twice, an Event twice) would show.
      await new Promise((resolve) => setTimeout(resolve, GRACE_MS))
      const lines = ctl.stderr.slice(logFrom).filter((l) => l.includes('marked Ready=Unknown'))
      const text = await metricsText(ctl)
      const statuses = Object.fromEntries(proxied!.proxy.statuses)
      console.log(`      responses to the controller by status: ${JSON.stringify(statuses)}; blind spells ${(await spells()) - spellsBefore}`)
      expect(statuses[429] ?? 0, "429s answered to the controller").to.equal(0)
      expect((await spells()) - spellsBefore, 'blind spells during the mass death').to.equal(0)
      expect(lines, 'mark log lines').to.have.length(POOLS)
      expect(marked().size, 'pools marked').to.equal(POOLS)
      expect(await unknownEvents(plane), 'Unknown Events').to.equal(POOLS)
      expect(sumSeries(text, `ironpool_controller_pools_marked_unknown_total{kind="${kind.name}"}`), 'marks counted').to.equal(POOLS)
      expect(ctl.child.exitCode, 'the controller still runs').to.equal(null)
    } catch (error) {
      const spells = ctl.stderr.slice(logFrom).filter((l) => l.includes('"view not whole')).length
      console.log(`      marked ${marked().size} of ${POOLS}; responses by status ${JSON.stringify(Object.fromEntries(proxied!.proxy.statuses))}; ${spells} blind spells`)
      console.log(`      --- controller log (last lines):\n${ctl.stderr.slice(-30).join('\n')}`)
      throw error
    }
  })
})

async function metricsText(controller: ControllerProcess): Promise<string> {
  return (await fetch(await controller.metricsUrl())).text()
}

/** The sum of every series whose name and labels start so. */
function sumSeries(text: string, prefix: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(prefix))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0)
}

async function unknownPools(plane: ControlPlane): Promise<string[]> {
  const kc = loadKubeConfig({kubeconfig: plane.adminKubeconfig})
  const body = await apiRequest<{items: Pool[]}>(kc, {method: 'GET', path: `/apis/${kind.group}/${kind.version}/${kind.plural}`, timeoutMs: 10_000})
  return body.items.filter((p) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'Unknown').map((p) => p.metadata.name)
}

/** The Unknown Events on the pools, counting an Event's repeats. */
async function unknownEvents(plane: ControlPlane): Promise<number> {
  const out = await plane.kubectl(['get', 'events', '-A', '--field-selector', `reason=${kind.unknownReason}`, '-o', 'json'])
  const items = (JSON.parse(out) as {items: {count?: number; series?: {count?: number}}[]}).items
  return items.reduce((sum, e) => sum + (e.series?.count ?? e.count ?? 1), 0)
}
