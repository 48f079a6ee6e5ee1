/**
 * `ironpool pool why` as a real process against the records a real controller left (issue 28): for a
 * pool marked after a blind spell (kube-apiserver paused), the printed silence, blind time and reason
 * are the controller's own log line's; for a silent pool whose write an admission policy refuses, the
 * holder (a write retrying) and the error are named. Exact fields, never wall-clock values.
 */
import {expect} from 'chai'
import {parse} from 'yaml'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {formatDuration} from '../../../src/core/durations.ts'
import type {PoolWhy} from '../../../src/core/lifecycle/reading/pool-why.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {runCli} from '../../support/cli.ts'
import {installCrds} from '../../support/control-plane.ts'
import {controllerIdentity, keepRenewing, startController, type ControllerProcess} from '../../support/controller-env.ts'
import {KubeObjects, readyOf} from '../../support/kube-objects.ts'
import {waitFor} from '../../support/wait.ts'

const kind = POOL_KINDS.machine
const GRACE = '3s'

describe('ironpool pool why (real processes, real API server)', function () {
  this.timeout(180_000)
  let plane: ControlPlane
  let admin: KubeObjects
  let controller: ControllerProcess | undefined

  const why = (name: string, ...args: string[]) => runCli(['pool', 'why', name, `--kubeconfig=${plane.adminKubeconfig}`, '--kind=machine', ...args])

  before(async function () {
    this.timeout(120_000)
    plane = await ControlPlane.start()
    await installCrds(plane)
    await controllerIdentity(plane)
    admin = new KubeObjects(plane.adminKubeconfig)
  })
  afterEach(async () => {
    await controller?.stop()
    controller = undefined
  })
  after(async () => plane?.stop())

  it('a pool marked after a blind spell: silence, blind time and reason as the controller logged them; exit 0', async () => {
    await admin.createPool(kind, 'why-dead')
    const renewer = keepRenewing(admin, kind, 'why-dead')
    controller = await startController(plane, ['--kinds=machine', `--grace-period=${GRACE}`])
    await waitFor('a whole view', async () => (await controller!.metric('ironpool_controller_view_whole{kind="machine"}')) === 1)
    await renewer.stop()
    plane.pauseApiServer()
    try {
      await controller.waitForLog('view not whole', {kind: 'machine', reason: 'api-unanswered'}, 20_000)
    } finally {
      plane.resumeApiServer()
    }
    await waitFor('why-dead Unknown', async () => readyOf(await admin.getPool(kind, 'why-dead'))?.status === 'Unknown', {timeoutMs: 30_000})
    const line = await controller.waitForLog('pool marked Ready=Unknown', {pool: 'why-dead'})
    expect(line.blindExcludedMs, 'blind time cut out of the silence').to.be.above(0)
    expect(line.blindReasons).to.include('api-unanswered')

    const json = await why('why-dead', '-o', 'json')
    expect(json.code, json.stderr).to.equal(0)
    const answer = JSON.parse(json.stdout) as PoolWhy
    expect(answer).to.deep.include({kind: 'machine', pool: 'why-dead', verdict: 'marked'})
    expect(answer.ready).to.deep.include({status: 'Unknown', reason: kind.unknownReason})
    const started = await controller.waitForLog('controller starting')
    expect(answer.record).to.deep.include({
      pool: 'why-dead',
      controller: started.identity,
      dryRun: false,
      state: 'marked',
      gracePeriodMs: 3_000,
      silenceMs: line.silenceMs,
      blindExcludedMs: line.blindExcludedMs,
      blindReasons: line.blindReasons,
      retries: line.retries,
    })
    expect(answer.record?.confirm?.outcome).to.equal('silent')
    expect(answer.record?.lastProgress.renewTime).to.equal((await admin.getLease(kind, 'why-dead'))?.spec?.renewTime)

    const yaml = await why('why-dead', '-o', 'yaml')
    expect(parse(yaml.stdout)).to.deep.equal(JSON.parse(json.stdout))
    const text = await why('why-dead')
    expect(text.code).to.equal(0)
    expect(text.stdout).to.include(`blind, excluded: ${formatDuration(Number(line.blindExcludedMs))} (${(line.blindReasons as string[]).join(', ')})`)
    expect(text.stdout).to.include(`silence:        ${formatDuration(Number(line.silenceMs))} of a 3s grace period`)
  })

  it('a silent pool whose Unknown write is refused: not marked, held by a write retrying, with the error; exit 3', async () => {
    // An admission policy that refuses the controller's status writes to this one pool (as a webhook would).
    await plane.kubectlApply(
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: {name: 'refuse-why-refused'},
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {resourceRules: [{apiGroups: [kind.group], apiVersions: ['*'], operations: ['UPDATE'], resources: [`${kind.plural}/status`]}]},
          validations: [{expression: "object.metadata.name != 'why-refused'", message: 'refused by the test policy'}],
        },
      },
      {apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: {name: 'refuse-why-refused'}, spec: {policyName: 'refuse-why-refused', validationActions: ['Deny']}},
    )
    await admin.createPool(kind, 'why-refused')
    controller = await startController(plane, ['--kinds=machine', `--grace-period=${GRACE}`])
    await waitFor('the write failing twice', () => controller!.logs().filter((l) => l.msg === 'writing Ready=Unknown failed' && l.pool === 'why-refused').length >= 2, {timeoutMs: 60_000})
    const answer = await waitFor('pool why naming the holder', async () => {
      const result = await why('why-refused', '-o', 'json')
      const parsed = result.code === 3 ? (JSON.parse(result.stdout) as PoolWhy) : undefined
      return parsed?.heldBy === undefined ? undefined : parsed
    }, {timeoutMs: 30_000})
    expect(answer).to.deep.include({verdict: 'not-marked', heldBy: {what: 'retrying', since: answer.record?.stateSince}})
    expect(answer.record).to.deep.include({state: 'retrying', retries: 2, dryRun: false})
    expect(answer.record?.lastError).to.include('refused by the test policy')
    expect(answer.summary).to.match(/^not marked: retrying since \S+: writing Ready=Unknown failed: .*refused by the test policy/)
    expect(readyOf(await admin.getPool(kind, 'why-refused'))?.status).to.equal(undefined)
  })
})
