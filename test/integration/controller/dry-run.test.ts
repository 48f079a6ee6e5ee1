/**
 * `ironpool controller --dry-run` beside a real `ironpool controller` in charge (issue 28): both real
 * processes with --leader-elect (each its own leader-election id), each as its own ServiceAccount (the
 * dry run with deploy/dry-run's read-only role), against a real API server whose audit log records
 * both. Stand-in poollets renew every pool; five of them die in two waves. The dry run must would-mark
 * exactly the pools the controller marks, write no pool at all (counted in the audit log, where the
 * controller's own writes show that the count sees writes), and the agreement report must say so.
 * Time passing is witnessed by silent witness pools, never by sleeping.
 */
import {expect} from 'chai'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {POOL_KINDS, type PoolKind} from '../../../src/core/pool-kinds.ts'
import {VERDICT_ANNOTATION, WOULD_MARK_REASON, type VerdictRecord} from '../../../src/core/lifecycle/verdict.ts'
import {auditUsers, WRITE_VERBS, type AuditLog} from '../../support/audit-log.ts'
import {runCli} from '../../support/cli.ts'
import {DEPLOY_DIR, installCrds} from '../../support/control-plane.ts'
import {ControllerProcess, GRACE_MS, keepRenewing, startController} from '../../support/controller-env.ts'
import {KubeObjects, readyOf} from '../../support/kube-objects.ts'
import {waitFor} from '../../support/wait.ts'

const CONTROLLER_USER = 'system:serviceaccount:ironpool-system:ironpool-controller'
const DRY_RUN_USER = 'system:serviceaccount:ironpool-system:ironpool-dry-run'
const POOL_RESOURCES = [POOL_KINDS.machine, POOL_KINDS.volume, POOL_KINDS.bucket].map((k) => k.plural)

const wouldMarked = (dry: ControllerProcess) => dry.logs().filter((l) => String(l.msg).includes('would be marked Ready=Unknown')).map((l) => String(l.pool))
const sorted = (names: Iterable<string>) => [...names].sort()

describe('ironpool controller --dry-run beside the controller in charge (real processes, audit log)', function () {
  this.timeout(240_000)
  let dir: string
  let audit: AuditLog
  let plane: ControlPlane
  let admin: KubeObjects
  let controller: ControllerProcess | undefined
  let dry: ControllerProcess | undefined
  const renewers: {stop(): Promise<void>}[] = []

  before(async function () {
    this.timeout(120_000)
    dir = await mkdtemp(path.join(tmpdir(), 'ironpool-dry-run-'))
    audit = await auditUsers(dir, [CONTROLLER_USER, DRY_RUN_USER])
    plane = await ControlPlane.start({apiServerArgs: audit.apiServerArgs})
    await installCrds(plane)
    admin = new KubeObjects(plane.adminKubeconfig)
  })

  after(async function () {
    this.timeout(60_000)
    await Promise.all(renewers.map((r) => r.stop()))
    await controller?.stop()
    await dry?.stop()
    await plane?.stop()
    await rm(dir, {recursive: true, force: true})
  })

  it('would-marks exactly the pools the controller marks, writes no pool, and the report says they agree', async () => {
    const pools: {kind: PoolKind; name: string}[] = [
      ...['a', 'b', 'c', 'd', 'e', 'f'].map((s) => ({kind: POOL_KINDS.machine, name: `dr-m-${s}`})),
      ...['a', 'b', 'c'].map((s) => ({kind: POOL_KINDS.volume, name: `dr-v-${s}`})),
    ]
    for (const {kind, name} of pools) await admin.createPool(kind, name)
    const renewing = new Map(pools.map(({kind, name}) => [name, keepRenewing(admin, kind, name)]))
    renewers.push(...renewing.values())

    controller = await startController(plane, ['--leader-elect'])
    await plane.kubectl(['apply', '--server-side', '-k', `${DEPLOY_DIR}dry-run`])
    const dryIdentity = await plane.serviceAccountIdentity('ironpool-system', 'ironpool-dry-run')
    dry = new ControllerProcess([
      'controller',
      '--dry-run',
      '--leader-elect',
      `--kubeconfig=${dryIdentity.kubeconfig}`,
      `--grace-period=${GRACE_MS}ms`,
      '--metrics-bind-address=127.0.0.1:0',
      '--health-probe-bind-address=127.0.0.1:0',
      '--log-format=json',
      '--log-level=debug',
    ])
    const started = await dry.waitForLog('controller starting', {dryRun: true}, 20_000)
    await controller.waitForLog('acquired leader lease ironpool-system/ironpool-controller')
    await dry.waitForLog('acquired leader lease ironpool-system/ironpool-controller-dry-run')
    for (const p of [controller, dry]) await waitFor('a whole view', async () => (await p.metric('ironpool_controller_view_whole{kind="machine"}')) === 1)

    const witness = async () => {
      const name = `dr-witness-${Date.now().toString(36)}`
      await admin.createPool(POOL_KINDS.machine, name)
      await waitFor(`${name} marked and would-marked`, () => controller!.marked().includes(name) && wouldMarked(dry!).includes(name), {timeoutMs: 30_000})
      return name
    }
    const witnesses = [await witness()]

    // Two waves, as poollets killed one after another: three, then two more once the first are marked.
    const waves = [['dr-m-a', 'dr-m-b', 'dr-v-a'], ['dr-m-c', 'dr-v-b']]
    for (const wave of waves) {
      await Promise.all(wave.map((name) => renewing.get(name)!.stop()))
      await waitFor(`${wave.join(', ')} marked and would-marked`, () => wave.every((n) => controller!.marked().includes(n) && wouldMarked(dry!).includes(n)), {timeoutMs: 30_000})
    }
    // Two more grace periods pass (each witnessed by a pool both judge): nobody else is marked.
    witnesses.push(await witness(), await witness())

    const dead = waves.flat()
    const expected = sorted([...dead, ...witnesses])
    expect(sorted(controller.marked()), 'marked by the controller in charge').to.deep.equal(expected)
    expect(sorted(wouldMarked(dry)), 'would-marked by the dry run').to.deep.equal(expected)
    for (const {kind, name} of pools.filter((p) => !dead.includes(p.name))) expect(readyOf(await admin.getPool(kind, name))?.status, name).to.not.equal('Unknown')

    // The dry run's own figures: counted as would-marks, none as marks.
    expect(await dry.metric('ironpool_controller_dry_run_marks_total{kind="machine"}')).to.equal(expected.filter((n) => n.startsWith('dr-m') || n.startsWith('dr-witness')).length)
    expect(await dry.metric('ironpool_controller_dry_run_marks_total{kind="volume"}')).to.equal(2)
    expect(await dry.metric('ironpool_controller_pools_marked_unknown_total{kind="machine"}')).to.equal(0)
    expect(await controller.metric('ironpool_controller_dry_run_marks_total{kind="machine"}')).to.equal(0)

    // Its WouldMarkUnknown Events, one per pool, each carrying the dry run's record.
    const events = JSON.parse(await plane.kubectl(['get', 'events', '-n', 'default', '--field-selector', `reason=${WOULD_MARK_REASON}`, '-o', 'json'])) as {
      items: {involvedObject: {name: string}; count?: number; reportingComponent?: string; metadata: {annotations?: Record<string, string>}}[]
    }
    expect(sorted(events.items.map((e) => e.involvedObject.name))).to.deep.equal(expected)
    for (const event of events.items) {
      const record = JSON.parse(event.metadata.annotations?.[VERDICT_ANNOTATION] ?? 'null') as VerdictRecord
      expect(event.reportingComponent).to.equal('ironpool-controller-dry-run')
      expect(record).to.deep.include({pool: event.involvedObject.name, dryRun: true, state: 'marked', controller: started.identity, gracePeriodMs: GRACE_MS})
      expect(record.silenceMs).to.be.at.least(GRACE_MS)
      // The record says what the dry run's own log line said of that would-mark.
      const line = dry.logs().find((l) => String(l.msg).includes('would be marked') && l.pool === event.involvedObject.name)
      expect({silenceMs: record.silenceMs, blindExcludedMs: record.blindExcludedMs, blindReasons: record.blindReasons}).to.deep.equal({silenceMs: line?.silenceMs, blindExcludedMs: line?.blindExcludedMs, blindReasons: line?.blindReasons})
    }

    // 0 pool writes by the dry run, in the audit log; the controller's writes are there, so the count sees writes.
    const writesTo = (user: string) => [...audit.requests(user)].filter(([key]) => WRITE_VERBS.includes(key.split(' ')[0]!) && POOL_RESOURCES.includes(key.split(' ')[1]!.split('/')[0]!))
    const dryRequests = audit.requests(DRY_RUN_USER)
    expect(writesTo(DRY_RUN_USER), 'pool writes by the dry run').to.deep.equal([])
    expect(dryRequests.get('list machinepools'), 'the dry run is in the audit log').to.be.above(0)
    expect(dryRequests.get('create events'), 'its Events are').to.be.at.least(expected.length)
    // Nothing else either: its own two Leases (leader election, the sight's write probe) and Events.
    const own = /^(create|update) leases ironpool-system\/(ironpool-controller-dry-run|ironpool-dry-run-write-probe)?$|^(create|patch) events default\//
    expect(audit.writes(DRY_RUN_USER).filter((w) => !own.test(w)), 'writes by the dry run other than its own Leases and Events').to.deep.equal([])
    const controllerWrites = writesTo(CONTROLLER_USER).reduce((sum, [, n]) => sum + n, 0)
    expect(controllerWrites, "the controller's pool writes").to.be.at.least(expected.length)

    // pool status says what the dry run would do: here, that it agrees with each mark.
    const status = await runCli(['pool', 'status', `--kubeconfig=${plane.adminKubeconfig}`, '-o', 'wide'])
    expect(status.code, status.stderr).to.equal(0)
    for (const name of expected) {
      const row = status.stdout.split('\n').find((l) => l.startsWith(`${name} `))
      expect(row, name).to.match(new RegExp(`dry run \\(${started.identity as string}\\) agrees: it would have marked it at \\S+, silent for`))
    }
    for (const {name} of pools.filter((p) => !dead.includes(p.name))) expect(status.stdout.split('\n').find((l) => l.startsWith(`${name} `)), name).to.not.include('dry run')

    // The agreement report, as an operator runs it.
    const report = await runCli(['dry-run', 'report', `--kubeconfig=${plane.adminKubeconfig}`, '--window=10s'])
    process.stderr.write(`${report.stdout}\n`)
    expect(report.code, report.stderr).to.equal(0)
    expect(report.stdout.split('\n').at(-1)).to.match(new RegExp(`^${expected.length} agreed, 0 marked only by the controller in charge, 0 only by the dry run \\(within 10s\\); agreement 100\\.0 %`))
    const json = await runCli(['dry-run', 'report', `--kubeconfig=${plane.adminKubeconfig}`, '--window=10s', '-o', 'json'])
    const doc = JSON.parse(json.stdout) as {agreed: number; onlyMarked: number; onlyWouldMark: number; ratio: number; pools: {pool: string}[]}
    expect(doc).to.deep.include({agreed: expected.length, onlyMarked: 0, onlyWouldMark: 0, ratio: 1})
    expect(sorted(doc.pools.map((p) => p.pool))).to.deep.equal(expected)
  })
})
