/**
 * `promtool check metrics` on a real scrape of a real controller and a real poollet (0 complaints), and
 * the poollet's client certificate as it exports it: the notAfter of the certificate its kubeconfig holds.
 */
import {expect} from 'chai'
import {X509Certificate} from 'node:crypto'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {clientCertificatePem} from '../../../src/kube/http/client-certificate.ts'
import {loadKubeConfig} from '../../../src/kube/http/kubeconfig.ts'
import type {CliProcess} from '../../support/cli.ts'
import {startController, type ControllerProcess} from '../../support/controller-env.ts'
import {KubeObjects} from '../../support/kube-objects.ts'
import {FAST, poolletControlPlane, poolletIdentity, startPoollet, type PoolletFixture} from '../../support/poollet-env.ts'
import {PROMTOOL_BUILD_TIMEOUT_MS, promtool, runPromtool} from '../../support/promtool.ts'
import {waitFor} from '../../support/wait.ts'

const kind = POOL_KINDS.machine
const POOL = 'metrics-check'
const ROTATION_POOL = 'rotation-fails'

async function scrape(process: CliProcess): Promise<string> {
  const response = await fetch(await process.metricsUrl(), {signal: AbortSignal.timeout(5_000)})
  expect(response.status).to.equal(200)
  return response.text()
}

describe('monitoring: promtool check metrics on real scrapes', function () {
  this.timeout(60_000)
  let controller: ControllerProcess | undefined
  let poollet: PoolletFixture | undefined
  let kubeconfig: string

  before(async function () {
    this.timeout(PROMTOOL_BUILD_TIMEOUT_MS)
    await promtool()
    const plane = await poolletControlPlane()
    const admin = new KubeObjects(plane.adminKubeconfig)
    await admin.createPool(kind, POOL)
    kubeconfig = (await poolletIdentity(plane, kind, POOL)).kubeconfig
    poollet = await startPoollet(plane, kind, POOL, [...FAST, '--metrics-bind-address=127.0.0.1:0'], kubeconfig)
    controller = await startController(plane, ['--kinds=machine'])
    // Both have done their work once: a tick renewed the Lease, the controller's view is whole.
    await waitFor('the first renewal', () => admin.getLease(kind, POOL), {timeoutMs: 30_000})
    await controller.waitForLog('view whole', {}, 30_000)
  })

  after(async function () {
    this.timeout(30_000)
    await controller?.stop()
    await poollet?.stop()
    // The control plane is shared: no silent pool is left for a later test's controller to mark.
    const admin = new KubeObjects((await poolletControlPlane()).adminKubeconfig)
    for (const pool of [POOL, ROTATION_POOL]) await admin.deletePool(kind, pool).catch(() => undefined)
  })

  for (const which of ['controller', 'poollet'] as const) {
    it(`the ${which}'s /metrics: no complaint`, async () => {
      const text = await scrape(which === 'controller' ? (controller as ControllerProcess) : (poollet as PoolletFixture).poollet)
      expect(text).to.include(which === 'controller' ? 'ironpool_controller_view_blind{' : 'ironpool_poollet_certificate_rotation_failures_total 0')
      const result = await runPromtool(['check', 'metrics'], {input: text})
      expect(result.stdout + result.stderr, 'promtool check metrics').to.equal('')
      expect(result.code).to.equal(0)
    })
  }

  it('the poollet exports the end of the client certificate it authenticates with', async () => {
    const text = await scrape((poollet as PoolletFixture).poollet)
    const line = text.split('\n').find((l) => l.startsWith('ironpool_poollet_certificate_expiration_timestamp_seconds '))
    const pem = clientCertificatePem(loadKubeConfig({kubeconfig}))
    expect(pem, 'the test identity authenticates with a certificate').to.be.a('string')
    const notAfter = new X509Certificate(pem ?? '').validToDate.getTime() / 1000
    expect(Number(line?.split(' ')[1])).to.equal(notAfter)
  })

  it('a poollet whose certificate renewal fails counts it, and exports the end of the certificate it still uses', async function () {
    this.timeout(90_000)
    const plane = await poolletControlPlane()
    const pool = ROTATION_POOL
    await new KubeObjects(plane.adminKubeconfig).createPool(kind, pool)
    // Past 90 % of its lifetime: the rotation renews at once; nobody approves its CSR here, so each try times out.
    const now = Date.now()
    const notAfter = new Date(now + 12 * 3_600_000)
    const identity = await plane.userIdentity(`${kind.poolletUserPrefix}${pool}`, [kind.poolletGroup], {validity: {notBefore: new Date(now - 30 * 86_400_000), notAfter}})
    const fixture = await startPoollet(plane, kind, pool, [...FAST, '--metrics-bind-address=127.0.0.1:0', '--rotate-certificates', '--certificate-request-timeout=1s'], identity.kubeconfig)
    try {
      await fixture.poollet.waitForLog('could not renew the client certificate', {}, 60_000)
      const text = await waitFor('the failure counted', async () => {
        const scraped = await scrape(fixture.poollet)
        return /^ironpool_poollet_certificate_rotation_failures_total [1-9]/m.test(scraped) ? scraped : undefined
      }, {timeoutMs: 30_000, intervalMs: 200})
      expect(text).to.include(`ironpool_poollet_certificate_expiration_timestamp_seconds ${Math.floor(notAfter.getTime() / 1000)}`)
    } finally {
      await fixture.stop()
    }
  })
})
