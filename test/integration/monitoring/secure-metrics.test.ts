import {expect} from 'chai'
import {request} from 'node:https'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {CONTROLLER_NAMESPACE} from '../../../src/deploy/names.ts'
import {KUBE_PROMETHEUS_SERVICE_ACCOUNT, SCRAPER_SERVICE_ACCOUNT} from '../../../src/deploy/monitoring/monitoring.ts'
import {DEPLOY_DIR} from '../../support/control-plane.ts'
import {startController, type ControllerProcess} from '../../support/controller-env.ts'
import {PROMTOOL_BUILD_TIMEOUT_MS, promtool, runPromtool} from '../../support/promtool.ts'

/** A GET over HTTPS that does not verify the controller's self-signed certificate (as the PodMonitor's insecureSkipVerify). */
function scrape(url: string, token?: string): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const req = request(url, {rejectUnauthorized: false, headers: token === undefined ? {} : {Authorization: `Bearer ${token}`}, timeout: 10_000}, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
    })
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url}`)))
    req.on('error', reject)
    req.end()
  })
}

/**
 * The controller's `--metrics-secure` (deploy/controller sets it) on a real kube-apiserver, with
 * deploy/controller's RBAC (TokenReview, SubjectAccessReview) and deploy/monitoring's scrape RBAC
 * applied: /metrics over TLS answers 401 without a token or with one kube-apiserver does not
 * authenticate, 403 to a ServiceAccount RBAC does not allow `get /metrics`, 200 to the scraper's and
 * kube-prometheus' ServiceAccounts, and the scrape passes `promtool check metrics`; the health probes stay
 * plain HTTP without a token.
 */
describe('controller --metrics-secure: /metrics over TLS behind TokenReview and SubjectAccessReview (real API server)', function () {
  this.timeout(120_000)
  let plane: ControlPlane
  let controller: ControllerProcess
  let url: string
  const token = (namespace: string, name: string) => plane.kubectl(['create', 'token', name, '-n', namespace, '--duration=600s']).then((t) => t.trim())

  before(async function () {
    this.timeout(PROMTOOL_BUILD_TIMEOUT_MS)
    await promtool()
    plane = await ControlPlane.start()
    controller = await startController(plane, ['--metrics-secure'])
    await plane.kubectlApply({apiVersion: 'v1', kind: 'Namespace', metadata: {name: KUBE_PROMETHEUS_SERVICE_ACCOUNT.namespace}})
    await plane.kubectlApply({apiVersion: 'v1', kind: 'ServiceAccount', metadata: KUBE_PROMETHEUS_SERVICE_ACCOUNT})
    await plane.kubectlApply({apiVersion: 'v1', kind: 'ServiceAccount', metadata: {name: 'nobody', namespace: 'default'}})
    await plane.kubectl(['apply', '--server-side', '-f', `${DEPLOY_DIR}monitoring/metrics-reader-rbac.yaml`])
    const line = await controller.waitForLog('serving metrics')
    expect(line.scheme).to.equal('https')
    url = `https://${String(line.address)}/metrics`
  })
  after(async () => {
    await controller?.stop()
    await plane?.stop()
  })

  it('answers 401 without a bearer token, and with a token kube-apiserver does not authenticate', async () => {
    const none = await scrape(url)
    expect(none.status).to.equal(401)
    expect(none.body).to.include('no bearer token')
    const forged = await scrape(url, 'not-a-token')
    expect(forged.status).to.equal(401)
    expect(forged.body).to.not.include('ironpool_')
  })

  it("answers 403 to a ServiceAccount that RBAC does not allow get on /metrics, naming it", async () => {
    const answer = await scrape(url, await token('default', 'nobody'))
    expect(answer.status).to.equal(403)
    expect(answer.body).to.include('system:serviceaccount:default:nobody may not get /metrics')
  })

  for (const sa of [{namespace: CONTROLLER_NAMESPACE, name: SCRAPER_SERVICE_ACCOUNT}, KUBE_PROMETHEUS_SERVICE_ACCOUNT]) {
    it(`answers 200 to ${sa.namespace}/${sa.name} (deploy/monitoring's binding), a scrape promtool check metrics passes`, async () => {
      const answer = await scrape(url, await token(sa.namespace, sa.name))
      expect(answer.status).to.equal(200)
      expect(answer.body).to.include('ironpool_controller_view_blind{')
      const result = await runPromtool(['check', 'metrics'], {input: answer.body})
      expect(result.stdout + result.stderr, 'promtool check metrics').to.equal('')
      expect(result.code).to.equal(0)
    })
  }

  it('speaks TLS only on the metrics port: plain HTTP gets no answer', async () => {
    const plain = await fetch(url.replace('https:', 'http:'), {signal: AbortSignal.timeout(10_000)}).then((r) => `HTTP ${r.status}`, (error: unknown) => `refused: ${String(error)}`)
    expect(plain).to.match(/^refused/)
  })

  it('keeps the health probes plain HTTP, without a token', async () => {
    const line = await controller.waitForLog('serving health-probes')
    expect(line.scheme).to.equal(undefined)
    const answer = await fetch(`http://${String(line.address)}/healthz`)
    expect(answer.status).to.equal(200)
  })
})
