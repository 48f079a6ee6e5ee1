/**
 * A pool kind whose status has no conditions, as IronCore's BucketPool: its own control plane serves
 * bucketpools from a CRD whose status schema has none (the shared one keeps ironpool's CRDs). The real
 * poollet learns that from the API, says so once, renews the Lease and writes no Ready; the real
 * controller still tracks the Lease and, once the poollet stops, reports the staleness (log, Event,
 * metric) without claiming a mark. The machine kind beside it keeps its full write plan.
 */
import {expect} from 'chai'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {poolCrd} from '../../../src/deploy/pool-crds.ts'
import {writePlanFromOpenApi} from '../../../src/kube/stores/served-schema.ts'
import {runCli} from '../../support/cli.ts'
import {controllerIdentity, startController, type ControllerProcess} from '../../support/controller-env.ts'
import {KubeObjects} from '../../support/kube-objects.ts'
import {startPoollet, type PoolletFixture} from '../../support/poollet-env.ts'
import {waitFor} from '../../support/wait.ts'

const bucket = POOL_KINDS.bucket

/** ironpool's BucketPool CRD with the conditions (and the columns that read them) taken out, as IronCore serves BucketPool. */
function bucketCrdWithoutConditions(): object {
  const crd = structuredClone(poolCrd(bucket)) as {spec: {versions: {schema: {openAPIV3Schema: {properties: {status: {properties: Record<string, unknown>}}}}; additionalPrinterColumns?: unknown[]}[]}}
  const version = crd.spec.versions[0]!
  delete version.schema.openAPIV3Schema.properties.status.properties.conditions
  delete version.additionalPrinterColumns
  return crd
}

describe('a pool kind without conditions (as IronCore serves BucketPool)', function () {
  this.timeout(180_000)
  let plane: ControlPlane
  let admin: KubeObjects
  let controller: ControllerProcess | undefined
  let fixture: PoolletFixture | undefined

  before(async () => {
    plane = await ControlPlane.start()
    await controllerIdentity(plane)
    await plane.kubectlApply(bucketCrdWithoutConditions())
    await waitFor('bucketpools without conditions served', async () => {
      const openapi = await plane.request(`/openapi/v3/apis/${bucket.group}/${bucket.version}`)
      return openapi.status === 200 && writePlanFromOpenApi(JSON.parse(openapi.body), bucket)?.conditions === false
    }, {timeoutMs: 30_000, intervalMs: 200})
    admin = new KubeObjects(plane.adminKubeconfig)
  })

  after(async () => {
    await fixture?.stop()
    await controller?.stop()
    await plane?.stop()
  })

  it('the poollet renews without writing Ready; the controller reports the stale pool, and claims no mark', async () => {
    const pool = 'nc-bucket'
    await admin.createPool(bucket, pool, {providerID: 'fixture://bucketpool'})
    fixture = await startPoollet(plane, bucket, pool, ['--heartbeat-interval=200ms', '--heartbeat-status-timeout=100ms', '--heartbeat-lease-duration=2s'])
    await fixture.poollet.waitForLog('write plan: this API has no conditions for bucketpools', {}, 20_000)
    const first = await waitFor('the Lease', () => admin.getLease(bucket, pool))
    await waitFor('renewTime to advance', async () => String((await admin.getLease(bucket, pool))?.spec?.renewTime) !== String(first.spec?.renewTime))
    const probes = fixture.runtime.calls.probe
    await waitFor('three more probes', () => fixture!.runtime.calls.probe >= probes + 3)
    const logs = fixture.poollet.logs()
    expect(logs.filter((l) => String(l.msg).includes('write plan'))).to.have.length(1)
    expect(logs.filter((l) => String(l.msg).includes('Ready='))).to.deep.equal([])
    expect((await admin.getPool(bucket, pool)).status?.conditions).to.equal(undefined)

    controller = await startController(plane, ['--kinds=machine,bucket'])
    await controller.waitForLog('write plan: this API has no conditions for bucketpools', {kind: 'bucket'})
    await controller.waitForLog('write plan: machinepools conditions with every field', {kind: 'machine'})
    await fixture.poollet.stop()
    const line = await controller.waitForLog(`pool ${pool} stale, cannot be marked: this API has no conditions for bucketpools`, {}, 20_000)
    expect(line).to.include({kind: 'bucket', pool, reason: 'no-conditions'})
    expect(controller.marked()).to.not.include(pool)
    const metrics = await (await fetch(await controller.metricsUrl())).text()
    expect(metrics).to.include('ironpool_controller_stale_unmarkable_total{kind="bucket",reason="no-conditions"} 1')
    expect(metrics).to.include('ironpool_controller_pools_marked_unknown_total{kind="bucket"} 0')
    const events = await waitFor('the Event', async () => {
      const out = await plane.kubectl(['get', 'events', '-A', '--field-selector', `involvedObject.name=${pool}`, '-o', 'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}'])
      return out.includes('StaleUnmarked') ? out : undefined
    })
    expect(events).to.include('BucketPoolStaleUnmarked: stale, cannot be marked: this API has no conditions for bucketpools')
    expect(events).to.not.include('BucketPoolStatusUnknown')

    // pool status says it too, once the Lease has expired on the operator's clock.
    const status = await waitFor('the pool status note', async () => {
      const run = await runCli(['pool', 'status', `--kubeconfig=${plane.adminKubeconfig}`, '--kind=bucket', '-o', 'wide'])
      return run.stdout.includes('stale, cannot be marked') ? run : undefined
    }, {timeoutMs: 30_000, intervalMs: 500})
    expect(status.stdout).to.match(new RegExp(`${pool}\\s+bucket\\s+None.*stale, cannot be marked: this API has no conditions for bucketpools`))
  })
})
