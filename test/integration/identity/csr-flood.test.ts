import {expect} from 'chai'
import type {ControlPlane, Identity} from '../../../src/controlplane/control-plane.ts'
import {poolletCsrTemplate} from '../../../src/core/identity/poollet-csr.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {DEFAULT_CSR_TIMEOUT_MS} from '../../../src/kube/identity/poollet-identity.ts'
import {generateCsr} from '../../../src/kube/identity/x509.ts'
import {startController, type ControllerProcess} from '../../support/controller-env.ts'
import {approved, bootstrapToken, clients, identityPlane, listCsrs, readCsr, submitCsr} from '../../support/identity-env.ts'
import {KubeObjects} from '../../support/kube-objects.ts'
import {waitFor} from '../../support/wait.ts'

const machine = POOL_KINDS.machine
const volume = POOL_KINDS.volume
const FLOOD = 500
const NOT_APPROVED = 'poollet certificate signing request not approved'
const APPROVED = 'approved a poollet client certificate'

/**
 * One bootstrap token floods the approver with 500 CSRs that each cost a SubjectAccessReview (volume
 * poollets, which a machine token may not request), all waiting when the approver starts; then another
 * token's one legitimate CSR, created last. A queue served in order would review it after the 500; the
 * approver's queue per requester reviews it among the first.
 */
describe('controller --approve-poollet-csrs: a flood of CSRs from one requester delays no other', function () {
  this.timeout(240_000)
  let plane: ControlPlane
  let controller: ControllerProcess
  let flooder: Identity
  let legit: string

  before(async () => {
    ;({plane} = await identityPlane())
    await new KubeObjects(plane.adminKubeconfig).createPool(machine, 'p1')
    flooder = await bootstrapToken(plane, machine)
    const other = await bootstrapToken(plane, machine)
    const junk = await generateCsr(poolletCsrTemplate(volume, 'v1'))
    const names = Array.from({length: FLOOD}, (_, i) => `flood-${String(i).padStart(3, '0')}`)
    // Ten at a time: the flood is created before the approver starts, so its size, not its pace, is what is tested.
    for (let i = 0; i < names.length; i += 10) await Promise.all(names.slice(i, i + 10).map((name) => submitCsr(flooder.kubeconfig, {pem: junk.csrPem, name})))
    legit = await submitCsr(other.kubeconfig, {pem: (await generateCsr(poolletCsrTemplate(machine, 'p1'))).csrPem, name: 'zz-legit'})
    controller = await startController(plane, ['--approve-poollet-csrs'])
  })
  after(async () => {
    await controller?.stop()
    await plane?.stop()
  })

  it(`approves the other requester's CSR before the flood of ${FLOOD} has been worked through`, async () => {
    // The outcome bound the product defines: the poollet's --certificate-request-timeout default.
    await waitFor('the legitimate CSR approved', async () => approved(await readCsr(plane, legit)), {timeoutMs: DEFAULT_CSR_TIMEOUT_MS, intervalMs: 100})
    // The approval lands at the API before its log line reaches this process's pipe (CI saw the line missing once).
    await controller.waitForLog(APPROVED, {csr: legit}, 30_000)
    const logs = controller.logs()
    const at = logs.findIndex((l) => l.msg === APPROVED && l.csr === legit)
    expect(at, 'the approval log line').to.be.at.least(0)
    const floodBefore = logs.slice(0, at).filter((l) => l.msg === NOT_APPROVED && String(l.csr).startsWith('flood-')).length
    expect(floodBefore, 'flood CSRs reviewed before the legitimate one was approved').to.be.below(FLOOD)
    const start = logs.find((l) => l.msg === 'approving poollet client certificates')
    expect(start?.queued, 'every CSR was waiting when the approver started').to.equal(FLOOD + 1)
    const ms = Date.parse(String(logs[at]?.time)) - Date.parse(String(start?.time))
    console.log(`      approved ${ms} ms after the approver started (by its log), with ${floodBefore} of ${FLOOD} flood CSRs reviewed before it`)
  })

  it('still reviews every flood CSR, and approves none of them', async () => {
    await waitFor('the whole flood reviewed', () => controller.logs().filter((l) => l.msg === NOT_APPROVED && String(l.csr).startsWith('flood-')).length >= FLOOD, {timeoutMs: 180_000, intervalMs: 500})
    const logs = controller.logs()
    const start = logs.find((l) => l.msg === 'approving poollet client certificates')
    const last = logs.filter((l) => l.msg === NOT_APPROVED && String(l.csr).startsWith('flood-')).at(-1)
    console.log(`      the flood took ${Date.parse(String(last?.time)) - Date.parse(String(start?.time))} ms in all (by the controller's log)`)
    const flood = (await listCsrs(plane)).filter((csr) => csr.spec.username === flooder.username)
    expect(flood).to.have.length(FLOOD)
    expect(flood.filter(approved)).to.deep.equal([])
  })

  it('bounds the Warning Events of one requester (a burst of 20); every refusal still has its log line, naming the rule', async () => {
    const lines = controller.logs().filter((l) => l.msg === NOT_APPROVED && String(l.csr).startsWith('flood-'))
    expect(lines).to.have.length(FLOOD)
    expect(new Set(lines.map((l) => l.reason))).to.deep.equal(new Set(['CertificateNotApproved']))
    expect(lines.every((l) => String(l.message).includes(`may not create certificatesigningrequests/${volume.csrSubresource}`))).to.be.true
    expect(lines.filter((l) => l.event === undefined)).to.have.length(20)
    const events = (await clients(plane.adminKubeconfig).core.listNamespacedEvent({namespace: 'default'})).items
    expect(events.filter((e) => e.involvedObject.name?.startsWith('flood-')).length).to.be.at.most(20)
  })
})
