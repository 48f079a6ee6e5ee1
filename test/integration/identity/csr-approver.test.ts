import {expect} from 'chai'
import type {ControlPlane, Identity} from '../../../src/controlplane/control-plane.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {POOLLET_CSR_USAGES} from '../../../src/core/identity/poollet-csr.ts'
import {startController, type ControllerProcess} from '../../support/controller-env.ts'
import {approved, bootstrapToken, createCsr, csrEvents, identityPlane, readCsr, type CsrShape} from '../../support/identity-env.ts'
import {waitFor} from '../../support/wait.ts'

const machine = POOL_KINDS.machine
const volume = POOL_KINDS.volume
const USAGES = [...POOLLET_CSR_USAGES]
const good = (pool: string): CsrShape => ({commonName: `${machine.poolletUserPrefix}${pool}`, organizations: [machine.poolletGroup], usages: USAGES})

/** Each CSR that breaks one rule, and the text its Warning Event must carry. */
const BROKEN: Array<{name: string; shape: CsrShape; says: string}> = [
  {name: 'wrong O', shape: {...good('p1'), organizations: ['pool-operators']}, says: 'rule organization'},
  {name: 'a SAN', shape: {...good('p1'), dnsNames: ['p1.example.com']}, says: 'rule no-dns-sans'},
  {name: 'an extra usage', shape: {...good('p1'), usages: [...USAGES, 'server auth']}, says: 'rule usages'},
  {name: 'CN of another kind', shape: {...good('p1'), commonName: `${volume.poolletUserPrefix}p1`}, says: 'rule common-name'},
  // Every rule holds for the volume kind, but the machine bootstrap token may not create certificatesigningrequests/volumepoolclient.
  {name: "another kind's CSR without its SAR permission", shape: {commonName: `${volume.poolletUserPrefix}v1`, organizations: [volume.poolletGroup], usages: USAGES}, says: 'may not create certificatesigningrequests/volumepoolclient'},
]

describe('controller --approve-poollet-csrs: IronCore’s rules on a real API server', function () {
  this.timeout(120_000)
  let plane: ControlPlane
  let controller: ControllerProcess
  let token: Identity
  const names = new Map<string, string>()
  let sentinel: string
  let foreign: string

  before(async () => {
    ;({plane} = await identityPlane())
    controller = await startController(plane, ['--approve-poollet-csrs'])
    token = await bootstrapToken(plane, machine)
    for (const c of BROKEN) names.set(c.name, await createCsr(token.kubeconfig, c.shape))
    foreign = await createCsr(token.kubeconfig, {commonName: 'system:node:n1', organizations: ['system:nodes'], usages: USAGES})
    // Created last: once it is approved, every CSR before it has been reviewed (one queue, in order).
    sentinel = await createCsr(token.kubeconfig, good('p9'))
    await waitFor('the sentinel CSR approved', async () => approved(await readCsr(plane, sentinel)), {timeoutMs: 60_000, intervalMs: 200})
  })
  after(async () => {
    await controller?.stop()
    await plane?.stop()
  })

  it("approves a poollet's CSR after the SubjectAccessReview, with IronCore's reason and an Event", async () => {
    const condition = (await readCsr(plane, sentinel)).status?.conditions?.find((c) => c.type === 'Approved')
    expect(condition).to.deep.include({status: 'True', reason: 'AutoApproved', message: 'Auto approving machine pool client certificate after SubjectAccessReview.'})
    const events = await waitFor('the approval Event', async () => (await csrEvents(plane, sentinel)).find((e) => e.reason === 'CertificateApproved'))
    expect(events.message).to.include(token.username)
  })

  for (const c of BROKEN) {
    it(`does not approve a CSR with ${c.name}, and says why in a Warning Event`, async () => {
      const name = names.get(c.name) ?? ''
      const event = await waitFor(`the Event about ${name}`, async () => (await csrEvents(plane, name)).find((e) => e.reason === 'CertificateNotApproved'))
      expect(event.type).to.equal('Warning')
      expect(event.message).to.include(c.says)
      const csr = await readCsr(plane, name)
      expect(csr.status?.conditions ?? [], 'no Approved, no Denied: left to others').to.deep.equal([])
    })
  }

  it('leaves a CSR that is no poollet’s alone: no decision, no Event', async () => {
    expect((await readCsr(plane, foreign)).status?.conditions ?? []).to.deep.equal([])
    expect(await csrEvents(plane, foreign)).to.deep.equal([])
  })
})
