/**
 * A pool kind whose status has no conditions, as IronCore's BucketPool: its own control plane serves
 * bucketpools from a CRD whose status schema has none (the shared one keeps ironpool's CRDs). The real
 * poollet learns that from the API, says so once, renews the Lease and writes no Ready; the real
 * controller still tracks the Lease and, once the poollet stops, reports the staleness (log, Event,
 * metric) without claiming a mark. The machine kind beside it keeps its full write plan.
 */
import {expect} from 'chai'
import {Status} from 'nice-grpc-common'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {poolCrd} from '../../../src/deploy/crds/pool-crds.ts'
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
    fixture = await startPoollet(plane, bucket, pool, ['--heartbeat-interval=500ms', '--heartbeat-status-timeout=400ms', '--heartbeat-lease-duration=2s'])
    // The poollet reads the API's OpenAPI document before its first tick: on a busy machine that start takes a while.
    await fixture.poollet.waitForLog("write plan: this API has no conditions for bucketpools", {}, 60_000).catch((error: unknown) => {
      process.stderr.write(fixture!.poollet.stderr.slice(-30).join("\n"))
      throw error
    })
    const first = await waitFor('the Lease', () => admin.getLease(bucket, pool))
    await waitFor('renewTime to advance', async () => String((await admin.getLease(bucket, pool))?.spec?.renewTime) !== String(first.spec?.renewTime))
    const probes = fixture.runtime.calls.probe
    await waitFor('three more probes', () => fixture!.runtime.calls.probe >= probes + 3)
    const logs = fixture.poollet.logs()
    expect(logs.filter((l) => String(l.msg).includes('write plan'))).to.have.length(1)
    expect(logs.filter((l) => String(l.msg).includes('Ready='))).to.deep.equal([])
    expect((await admin.getPool(bucket, pool)).status?.conditions).to.equal(undefined)

    // No condition to show it: the runtime failing and recovering is logged at each change, recorded as
    // an Event on the pool, and `pool status` shows the latest.
    const events = (reason: string) => plane.kubectl(['get', 'events', '-A', '--field-selector', `involvedObject.name=${pool},reason=${reason}`, '-o', 'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}'])
    await waitFor('the first probe Event', async () => (await events('BucketPoolProbeSucceeded')).includes('bucket runtime status probe succeeded'))
    fixture.runtime.behave({mode: 'fail', code: Status.UNAVAILABLE, message: 'bucketbroker is stopping'})
    await fixture.poollet.waitForLog(`pool ${pool}: runtime probe failed: /bucket.v1alpha1.BucketRuntime/ListBucketClasses UNAVAILABLE: bucketbroker is stopping`)
    await waitFor('the failure Event', async () => (await events('BucketPoolProbeFailed')).includes('UNAVAILABLE: bucketbroker is stopping'))
    const failing = await waitFor('pool status shows the failure', async () => {
      const run = await runCli(['pool', 'status', `--kubeconfig=${plane.adminKubeconfig}`, '--kind=bucket', '-o', 'wide', pool])
      return run.stdout.includes('runtime probe failed') ? run.stdout : undefined
    }, {timeoutMs: 30_000, intervalMs: 500})
    expect(failing).to.match(/runtime probe failed \S+ ago: \/bucket\.v1alpha1\.BucketRuntime\/ListBucketClasses UNAVAILABLE: bucketbroker is stopping \(BucketPoolProbeFailed\)/)
    fixture.runtime.behave({mode: 'answer'})
    await fixture.poollet.waitForLog(`pool ${pool}: bucket runtime status probe succeeded again`)
    await waitFor('pool status shows the recovery', async () => {
      const run = await runCli(['pool', 'status', `--kubeconfig=${plane.adminKubeconfig}`, '--kind=bucket', '-o', 'wide', pool])
      return /runtime probe succeeded \S+ ago: bucket runtime status probe succeeded again \(BucketPoolProbeSucceeded\)/.test(run.stdout)
    }, {timeoutMs: 30_000, intervalMs: 500})
    // One line per change of outcome: never the same outcome twice in a row. On a busy machine a probe
    // may also miss its 100 ms deadline, a change of its own; the runtime's failure and its recovery
    // must be there, in that order, after the first success.
    const said = fixture.poollet.logs().map((l) => String(l.msg)).filter((msg) => /^pool nc-bucket: (runtime probe failed|bucket runtime status probe succeeded)/.test(msg))
    const outcomes = said.map((msg) => (msg.includes('failed') ? 'failed' : 'succeeded'))
    expect(outcomes.filter((outcome, i) => outcome === outcomes[i - 1]), `each line a change: ${said.join(' | ')}`).to.deep.equal([])
    const failedAt = said.findIndex((msg) => msg.includes('UNAVAILABLE: bucketbroker is stopping'))
    expect(outcomes.slice(0, Math.max(failedAt, 0)), `a success before the runtime failed: ${said.join(' | ')}`).to.include('succeeded')
    expect(said.slice(failedAt + 1).some((msg) => msg.includes('bucket runtime status probe succeeded again')), said.join(' | ')).to.be.true

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
    const stale = await waitFor('the Event', async () => {
      const out = await plane.kubectl(['get', 'events', '-A', '--field-selector', `involvedObject.name=${pool}`, '-o', 'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}'])
      return out.includes('StaleUnmarked') ? out : undefined
    })
    expect(stale).to.include('BucketPoolStaleUnmarked: stale, cannot be marked: this API has no conditions for bucketpools')
    expect(stale).to.not.include('BucketPoolStatusUnknown')

    // pool status says it too, once the Lease has expired on the operator's clock.
    const status = await waitFor('the pool status note', async () => {
      const run = await runCli(['pool', 'status', `--kubeconfig=${plane.adminKubeconfig}`, '--kind=bucket', '-o', 'wide'])
      return run.stdout.includes('stale, cannot be marked') ? run : undefined
    }, {timeoutMs: 30_000, intervalMs: 500})
    expect(status.stdout).to.match(new RegExp(`${pool}\\s+bucket\\s+None.*stale, cannot be marked: this API has no conditions for bucketpools`))
  })
})
