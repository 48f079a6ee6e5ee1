import {PatchStrategy, setHeaderOptions} from '@kubernetes/client-node'
import {expect} from 'chai'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {CONTROLLER_NAME, CONTROLLER_NAMESPACE, poolletClusterRoleName, poolletRoleName} from '../../../src/deploy/names.ts'
import {DEPLOY_DIR} from '../../support/control-plane.ts'
import {waitFor} from '../../support/wait.ts'
import {classify, clientsFor, column, COLUMNS, CONTROLLER_EVENTS, eventBody, leaseBody, policyProbe, type Answer, type Outcome} from './access-matrix.ts'

const machine = POOL_KINDS.machine
const volume = POOL_KINDS.volume

/**
 * Each row's expected outcomes, in COLUMNS' order (the printed table's): ok = the request worked;
 * RBAC = 403 from the authorizer; policy = 403 from the poollet admission policy. The SAR columns ask
 * (SelfSubjectAccessReview) what the CSR approver's SubjectAccessReview asks: ok = allowed.
 */
const EXPECTED: Record<string, Outcome[]> = {
  //                                      list   p1 st.  p2 st.    v1 st.  del p1  mk L p1  renew p1  mk L p3   renew p2  renew v1  read L  L dflt  leader  Ev p1     Ev p2     patch p1  patch p2  Secrets  mk CSR  SAR boot  SAR self
  'controller SA': /*                 */ ['ok', 'ok', 'ok', 'ok', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'ok', 'RBAC', 'ok', 'ok', 'ok', 'ok', 'ok', 'RBAC', 'RBAC', 'RBAC', 'RBAC'],
  // A poollet may ask for its own renewal (the self subresource), never for a bootstrap token's any-pool certificate.
  'poollet p1 (machine)': /*          */ ['ok', 'ok', 'policy', 'RBAC', 'RBAC', 'ok', 'ok', 'policy', 'policy', 'RBAC', 'ok', 'RBAC', 'RBAC', 'ok', 'policy', 'ok', 'policy', 'RBAC', 'ok', 'RBAC', 'ok'],
  'poollet v1 (volume)': /*           */ ['RBAC', 'RBAC', 'RBAC', 'ok', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'ok', 'RBAC', 'RBAC', 'RBAC', 'policy', 'policy', 'policy', 'policy', 'RBAC', 'ok', 'RBAC', 'RBAC'],
  // In the machine poollet group, but not named `compute.ironcore.dev:system:machinepool:<pool>`: it owns no pool
  // (and the approver's self rule gives it no certificate: its name is no poollet's).
  'group member, no poollet name': /* */ ['ok', 'policy', 'policy', 'RBAC', 'RBAC', 'policy', 'policy', 'policy', 'policy', 'RBAC', 'ok', 'RBAC', 'RBAC', 'policy', 'policy', 'policy', 'policy', 'RBAC', 'ok', 'RBAC', 'ok'],
  'user in no group': /*              */ ['RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC'],
  // A bootstrap token of the machine kind: CSRs only, for any machine pool (the bootstrap subresource), no self renewal.
  'machine bootstrap token': /*       */ ['RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'RBAC', 'ok', 'ok', 'RBAC'],
}

function table(rows: Array<[string, string[]]>): string {
  const header = ['', ...COLUMNS.map((column) => column.title)]
  const all = [header, ...rows.map(([name, cells]) => [name, ...cells])]
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)))
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(([name, cells]) => line([name, ...cells]))].join('\n')
}

describe('access matrix of deploy/default (real requests on a real API server)', function () {
  this.timeout(120_000)
  let plane: ControlPlane
  const answers = new Map<string, {username: string; answers: Answer[]}>()

  before(async () => {
    // Private control plane: the install's cluster-wide RBAC and admission policy stay out of the shared one.
    plane = await ControlPlane.start()
    await plane.kubectl(['apply', '-k', `${DEPLOY_DIR}default`])
    const crds = [machine, volume].map((kind) => `crd/${kind.plural}.${kind.group}`)
    await plane.kubectl(['wait', '--for=condition=Established', '--timeout=30s', ...crds])
    const pool = (kind: typeof machine, name: string) => ({apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, metadata: {name}})
    await plane.kubectlApply(
      pool(machine, 'p1'),
      pool(machine, 'p2'),
      pool(volume, 'v1'),
      leaseBody('p2', machine.leaseNamespace),
      leaseBody('v1', volume.leaseNamespace),
      ...Object.entries(CONTROLLER_EVENTS).map(([about, name]) => ({apiVersion: 'v1', kind: 'Event', ...eventBody(about, name)})),
    )

    const identities = {
      // After the apply: the ServiceAccount is deploy/controller's.
      'controller SA': await plane.serviceAccountIdentity(CONTROLLER_NAMESPACE, CONTROLLER_NAME),
      'poollet p1 (machine)': await plane.userIdentity(`${machine.poolletUserPrefix}p1`, [machine.poolletGroup]),
      'poollet v1 (volume)': await plane.userIdentity(`${volume.poolletUserPrefix}v1`, [volume.poolletGroup]),
      'group member, no poollet name': await plane.userIdentity('pool-operator', [machine.poolletGroup]),
      'user in no group': await plane.userIdentity('nobody'),
      'machine bootstrap token': await plane.bootstrapTokenIdentity([machine.bootstrapperGroup]),
    }
    // The admission policy is in force once kube-apiserver has loaded it, some time after the apply
    // (a fresh clone once saw p1's patch of p2 pass before it was): wait for a denial only it makes.
    const probe = clientsFor(identities['poollet p1 (machine)'].kubeconfig)
    await waitFor('the poollet admission policy in force', async () => (await classify(policyProbe(probe))).outcome === 'policy', {timeoutMs: 30_000, intervalMs: 200})
    for (const [row, identity] of Object.entries(identities)) {
      const clients = clientsFor(identity.kubeconfig)
      const rowAnswers: Answer[] = []
      for (const column of COLUMNS) rowAnswers.push(await classify(column.run(clients)))
      answers.set(row, {username: identity.username, answers: rowAnswers})
    }
    console.log(`\n${table([...answers].map(([row, {answers: cells}]) => [row, cells.map((answer) => answer.outcome)]))}\n`)
  })
  after(async () => {
    await plane?.stop()
  })

  for (const [row, expected] of Object.entries(EXPECTED)) {
    it(`${row}: every cell as designed`, () => {
      const actual = answers.get(row)
      expect(actual, row).to.not.be.undefined
      COLUMNS.forEach((column, i) => {
        const answer = actual?.answers[i]
        expect(answer?.outcome, `${row} × ${column.title}: ${answer?.message}`).to.equal(expected[i])
      })
    })
  }

  it("names the user and the object in the policy's denials", () => {
    for (const [row, {username, answers: cells}] of answers) {
      cells.forEach((answer, i) => {
        if (answer.outcome !== 'policy') return
        const asked = COLUMNS[i]
        expect(answer.message, `${row} × ${asked?.title}: ${answer.message}`).to.include(username).and.to.match(new RegExp(`[ /]${asked?.object}: `))
      })
    }
    const example = answers.get('poollet p1 (machine)')?.answers[COLUMNS.indexOf(column('patch p2 status'))]?.message
    console.log(`      e.g. ${example}`)
  })

  it("refuses a poollet certificate whose username is another kind's, even with the machine group (policy)", async () => {
    const mixed = await plane.userIdentity(`${volume.poolletUserPrefix}p1`, [machine.poolletGroup])
    const c = clientsFor(mixed.kubeconfig)
    expect((await classify(column('patch p1 status').run(c))).outcome, 'patch p1 status').to.equal('policy')
    expect((await classify(column('renew Lease p1').run(c))).outcome, 'renew Lease p1').to.equal('policy')
  })

  it('refuses a poollet a Lease created with generateName (no name to match its own)', async () => {
    const poollet = await plane.userIdentity(`${machine.poolletUserPrefix}p1`, [machine.poolletGroup])
    const body = leaseBody('', machine.leaseNamespace)
    body.metadata = {generateName: 'p1-', namespace: machine.leaseNamespace}
    const answer = await classify(clientsFor(poollet.kubeconfig).leases.createNamespacedLease({namespace: machine.leaseNamespace, body}))
    expect(answer.outcome, answer.message).to.equal('policy')
  })

  it("refuses a poollet that re-points another pool's Event at its own pool, or its own Event at another pool (policy)", async () => {
    const poollet = clientsFor((await plane.userIdentity(`${machine.poolletUserPrefix}p1`, [machine.poolletGroup])).kubeconfig)
    const repoint = (name: string, pool: string) =>
      poollet.core.patchNamespacedEvent({name, namespace: 'default', body: {involvedObject: {name: pool}}}, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))
    expect((await classify(repoint(CONTROLLER_EVENTS.p2, 'p1'))).outcome, 'p2 → p1').to.equal('policy')
    expect((await classify(repoint(CONTROLLER_EVENTS.p1, 'p2'))).outcome, 'p1 → p2').to.equal('policy')
  })

  it('refuses a machine poollet an Event about a volume pool of the same name as its own (policy)', async () => {
    const poollet = clientsFor((await plane.userIdentity(`${machine.poolletUserPrefix}p1`, [machine.poolletGroup])).kubeconfig)
    const body = eventBody('p1')
    body.involvedObject = {apiVersion: `${volume.group}/${volume.version}`, kind: volume.kind, name: 'p1'}
    expect((await classify(poollet.core.createNamespacedEvent({namespace: 'default', body}))).outcome).to.equal('policy')
  })

  it('leaves Events about namespaced objects to RBAC: IronCore’s poollets record them about their Machines', async () => {
    const poollet = clientsFor((await plane.userIdentity(`${machine.poolletUserPrefix}p1`, [machine.poolletGroup])).kubeconfig)
    const body = eventBody('m1')
    body.involvedObject = {apiVersion: `${machine.group}/${machine.version}`, kind: 'Machine', namespace: 'default', name: 'm1'}
    const answer = await classify(poollet.core.createNamespacedEvent({namespace: 'default', body}))
    expect(answer.outcome, answer.message).to.equal('ok')
  })

  it('leaves users who are not poollets alone: a user outside every poollet group with a writer role is judged by RBAC only', async () => {
    const operator = await plane.userIdentity('pool-operator', ['pool-operators'])
    await plane.kubectl(['create', 'clusterrolebinding', 'pool-operators', `--clusterrole=${poolletClusterRoleName(machine)}`, '--group=pool-operators'])
    await plane.kubectl(['create', 'rolebinding', 'pool-operators', '-n', machine.leaseNamespace, `--role=${poolletRoleName(machine)}`, '--group=pool-operators'])
    const c = clientsFor(operator.kubeconfig)
    expect((await classify(column('patch p2 status').run(c))).outcome, 'patch p2 status').to.equal('ok')
    expect((await classify(column('renew Lease p2').run(c))).outcome, 'renew Lease p2').to.equal('ok')
  })
})
