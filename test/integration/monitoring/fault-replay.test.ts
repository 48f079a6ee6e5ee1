/**
 * ironpool's alerts replayed from real faults. On a control plane of its own, the fault suite's fleet
 * (real poollets with test runtimes, the real controller) runs while a recorder scrapes every process's
 * /metrics; each fault is injected into the real processes, and the recording becomes promtool
 * input_series (recorder.ts says how time and values map). promtool then evaluates deploy/monitoring's
 * own rules over it and the test asserts, for each fault:
 * - before the fault no alert fires;
 * - at no step does any alert fire but the fault's own;
 * - the fault's alerts fire by the end of its hold: their `for` after the condition could first hold,
 *   plus what the system needs to show it (said per fault);
 * - an alert with a `for` does not fire sooner than that `for` after the fault began.
 */
import {expect} from 'chai'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {Status} from 'nice-grpc'
import {stringify} from 'yaml'
import {ALERT_RULES, CONTROLLER_JOB, POOLLET_JOB, ruleGroups, type Severity} from '../../../src/deploy/monitoring/alerts.ts'
import {FaultFleet, kind, POOLLET_ARGS} from '../faults/fault-fleet.ts'
import {startPoollet, type PoolletFixture} from '../../support/poollet-env.ts'
import {PROMTOOL_BUILD_TIMEOUT_MS, promtool, runPromtool} from '../../support/promtool.ts'
import {waitFor} from '../../support/wait.ts'
import {MetricsRecorder, type Target} from './recorder.ts'

const METRICS_ARGS = ['--metrics-bind-address=127.0.0.1:0']
/** Quiet steps before each fault, and steps recorded after it ends. */
const BEFORE_STEPS = 3
const AFTER_STEPS = 3
const FIRING = 'ALERTS{alertstate="firing"'

interface ReplayFault {
  name: string
  /** The alerts (and severities) it must fire; no other may. */
  fires: ReadonlyArray<{alert: string; severity: Severity}>
  start(recorder: MetricsRecorder): void | Promise<void>
  /** Records while the fault lasts: long enough for its alerts' `for`, and for the system to show the fault first. */
  hold(recorder: MetricsRecorder): Promise<void>
  end(): void | Promise<void>
}

function forMinutes(alert: string): number {
  return Math.max(...ALERT_RULES.filter((r) => r.alert === alert).map((r) => Number(/^(\d+)m$/.exec(r.for)?.[1] ?? 'NaN')))
}

/** The promtool test of one recorded fault: its expectations as promql_expr_test over ALERTS. */
function replayTest(recorder: MetricsRecorder, fault: ReplayFault, faultStart: number, lastFaultStep: number): Record<string, unknown> {
  const names = [...new Set(fault.fires.map((f) => f.alert))]
  const tests: Array<Record<string, unknown>> = []
  for (let step = 0; step < recorder.length; step++) {
    tests.push({expr: `group by (alertname) (${FIRING}, alertname!~"${names.join('|')}"})`, eval_time: `${step}m`, exp_samples: []})
    if (step < faultStart) tests.push({expr: `group by (alertname) (${FIRING}})`, eval_time: `${step}m`, exp_samples: []})
  }
  for (const alert of names) {
    const early = faultStart + forMinutes(alert) - 1
    if (forMinutes(alert) > 0) tests.push({expr: `group by (alertname) (${FIRING}, alertname="${alert}"})`, eval_time: `${early}m`, exp_samples: []})
  }
  tests.push({
    expr: `group by (alertname, severity) (${FIRING}, alertname=~"${names.join('|')}"})`,
    eval_time: `${lastFaultStep}m`,
    exp_samples: fault.fires.map((f) => ({labels: `{alertname="${f.alert}", severity="${f.severity}"}`, value: 1})),
  })
  return {
    rule_files: ['rules.yaml'],
    evaluation_interval: '1m',
    tests: [{name: fault.name, interval: '1m', input_series: recorder.inputSeries(), promql_expr_test: tests}],
  }
}

describe('monitoring: the alerts replayed from real faults', function () {
  this.timeout(240_000)
  let fleet: FaultFleet
  let dir: string
  const poolletUrls = new Map<string, string>()

  async function poolletTarget(pool: string, fixture: PoolletFixture): Promise<Target> {
    poolletUrls.set(pool, await fixture.poollet.metricsUrl())
    return {labels: poolletLabels(pool, poolletUrls.get(pool) ?? ''), url: () => poolletUrls.get(pool)}
  }

  function poolletLabels(pool: string, url: string): Record<string, string> {
    return {job: POOLLET_JOB, instance: new URL(url || 'http://pending').host, namespace: 'pools', pod: `${kind.name}poollet-${pool}`, pool}
  }

  async function recorderOfFleet(): Promise<MetricsRecorder> {
    const recorder = new MetricsRecorder()
    const controllerUrl = await fleet.controller?.metricsUrl()
    recorder.add({labels: {job: CONTROLLER_JOB, instance: new URL(controllerUrl ?? '').host, namespace: 'ironpool-system', pod: 'ironpool-controller-0'}, url: () => controllerUrl})
    for (const [pool, fixture] of fleet.poollets) recorder.add(await poolletTarget(pool, fixture))
    return recorder
  }

  async function quiet(): Promise<void> {
    await fleet.waitAllReady()
    await waitFor('the controller\'s view whole', async () => (await fleet.controller?.metric(`ironpool_controller_view_whole{kind="${kind.name}"}`)) === 1, {timeoutMs: 60_000, intervalMs: 200})
  }

  async function replay(fault: ReplayFault): Promise<void> {
    await quiet()
    const recorder = await recorderOfFleet()
    await recorder.record(BEFORE_STEPS)
    const faultStart = recorder.length
    try {
      await fault.start(recorder)
      await fault.hold(recorder)
    } finally {
      await fault.end()
    }
    const lastFaultStep = recorder.length - 1
    await recorder.record(AFTER_STEPS)
    const file = path.join(dir, `replay-${fault.name.replaceAll(/\W+/g, '-')}.yaml`)
    await writeFile(file, stringify(replayTest(recorder, fault, faultStart, lastFaultStep), {lineWidth: 0}))
    console.log(`      ${recorder.length} steps (fault at ${faultStart}-${lastFaultStep}), ${recorder.inputSeries().length} series`)
    const result = await runPromtool(['test', 'rules', path.basename(file)], {cwd: dir})
    expect(result.code, `promtool test rules ${file}:\n${result.stdout}${result.stderr}`).to.equal(0)
  }

  before(async function () {
    this.timeout(PROMTOOL_BUILD_TIMEOUT_MS)
    await promtool()
    dir = await mkdtemp(path.join(tmpdir(), 'ironpool-replay-'))
    await writeFile(path.join(dir, 'rules.yaml'), stringify(ruleGroups()))
    fleet = await FaultFleet.start({live: 2, poolletArgs: METRICS_ARGS})
    await fleet.startController((await fleet.controllerKubeconfig()).kubeconfig)
  })

  let failed = false
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true
  })

  after(async function () {
    this.timeout(60_000)
    await fleet?.stop()
    // Kept when a replay failed, for promtool's own reading (its path is in the failure).
    if (dir && !failed) await rm(dir, {recursive: true, force: true})
  })

  it('the controller paused (SIGSTOP): IronpoolControllerDown', async () => {
    const child = () => fleet.controller?.child
    await replay({
      name: 'controller paused',
      fires: [{alert: 'IronpoolControllerDown', severity: 'critical'}],
      start: () => void child()?.kill('SIGSTOP'),
      // Its first scrape fails at once: the for, and two steps.
      hold: (recorder) => recorder.record(forMinutes('IronpoolControllerDown') + 3),
      end: () => void child()?.kill('SIGCONT'),
    })
  })

  it('kube-apiserver paused: IronpoolControllerBlind (api-unanswered) and IronpoolPoolletLeaseRenewalsFailing', async () => {
    await replay({
      name: 'kube-apiserver paused',
      fires: [
        {alert: 'IronpoolControllerBlind', severity: 'critical'},
        {alert: 'IronpoolPoolletLeaseRenewalsFailing', severity: 'warning'},
      ],
      start: () => fleet.plane.pauseApiServer(),
      // The controller's probe deadline (grace/4) and a poollet's request deadline are about two steps.
      hold: (recorder) => recorder.record(forMinutes('IronpoolPoolletLeaseRenewalsFailing') + 5),
      end: () => fleet.plane.resumeApiServer(),
    })
  })

  it('a runtime failing: IronpoolPoolletRuntimeProbeFailing', async () => {
    const runtime = fleet.poollets.get('live-1')?.runtime
    await replay({
      name: 'runtime failing',
      fires: [{alert: 'IronpoolPoolletRuntimeProbeFailing', severity: 'warning'}],
      start: () => runtime?.behave({mode: 'fail', code: Status.UNAVAILABLE, message: 'the runtime is down'}),
      // More than half of the 5m window failing takes three steps, then the for. Shorter than 15 steps
      // (the pool is Ready=False meanwhile: IronpoolPoolsNotReady must not fire yet).
      hold: (recorder) => recorder.record(forMinutes('IronpoolPoolletRuntimeProbeFailing') + 5),
      end: () => runtime?.behave({mode: 'answer'}),
    })
  })

  it('a poollet killed (SIGKILL): IronpoolPoolsNotReady (Unknown)', async () => {
    const pool = 'live-2'
    await replay({
      name: 'poollet killed',
      fires: [{alert: 'IronpoolPoolsNotReady', severity: 'warning'}],
      start: () => void fleet.poollets.get(pool)?.poollet.child.kill('SIGKILL'),
      // Held until the controller's own scrape counts the pool Unknown (its grace period, about six
      // steps, and the watch event of its mark: on a busy machine a step or two after the mark's log
      // line), then the for, and three steps of margin (the alert fires one step after the for).
      hold: async (recorder) => {
        await recorder.recordUntil(`${pool} marked Unknown`, () => fleet.controller?.marked().includes(pool) ?? false, 60)
        await recorder.recordUntil('the controller counting a pool Unknown', async () => ((await fleet.controller?.metric(`ironpool_controller_pools{kind="${kind.name}",status="Unknown"}`)) ?? 0) >= 1, 20)
        await recorder.record(forMinutes('IronpoolPoolsNotReady') + 3)
      },
      // A new poollet for the pool, so that the next fault starts from a fleet all Ready.
      end: async () => {
        await fleet.poollets.get(pool)?.stop()
        fleet.poollets.set(pool, await startPoollet(fleet.plane, kind, pool, [...POOLLET_ARGS, ...METRICS_ARGS]))
      },
    })
  })

  it('a client certificate near its end (12 hours left): IronpoolPoolletCertificateExpiration, warning and critical', async () => {
    const pool = 'cert-1'
    let fixture: PoolletFixture | undefined
    let url: string | undefined
    await replay({
      name: 'certificate near its end',
      fires: [
        {alert: 'IronpoolPoolletCertificateExpiration', severity: 'critical'},
        {alert: 'IronpoolPoolletCertificateExpiration', severity: 'warning'},
      ],
      async start(recorder) {
        await fleet.admin.createPool(kind, pool)
        const now = Date.now()
        const identity = await fleet.plane.userIdentity(`${kind.poolletUserPrefix}${pool}`, [kind.poolletGroup], {
          validity: {notBefore: new Date(now - 30 * 86_400_000), notAfter: new Date(now + 12 * 3_600_000)},
        })
        fixture = await startPoollet(fleet.plane, kind, pool, [...POOLLET_ARGS, ...METRICS_ARGS], identity.kubeconfig)
        const started = fixture
        void started.poollet.metricsUrl().then((u) => (url = u), () => undefined)
        // A new pod: Prometheus finds it, and scrapes it once it serves.
        recorder.add({labels: {job: POOLLET_JOB, instance: 'cert-1:8080', namespace: 'pools', pod: `${kind.name}poollet-${pool}`, pool}, url: () => url})
      },
      // No for: the first scrape that has the certificate, and two steps.
      hold: async (recorder) => {
        await recorder.recordUntil(`${pool}'s poollet serving /metrics`, () => url !== undefined, 60)
        await recorder.record(3)
      },
      async end() {
        await fixture?.stop()
        await fleet.admin.deletePool(kind, pool)
      },
    })
  })
})
