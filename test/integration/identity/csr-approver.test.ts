import {ApiException} from '@kubernetes/client-node'
import {expect} from 'chai'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import type {ControlPlane, Identity} from '../../../src/controlplane/control-plane.ts'
import {renderKubeconfig} from '../../../src/controlplane/kubeconfig.ts'
import {CLIENT_SIGNER} from '../../../src/core/identity/poollet-csr.ts'
import {startController, type ControllerProcess} from '../../support/controller-env.ts'
import {CSR_CASES, machine, volume, type CsrCase, type Requester} from '../../support/csr-cases.ts'
import {opensslCsr, type Crafted} from '../../support/csr-craft.ts'
import {approved, bootstrapToken, csrEvents, identityPlane, readCsr, submitCsr} from '../../support/identity-env.ts'
import {KubeObjects} from '../../support/kube-objects.ts'
import {waitFor} from '../../support/wait.ts'

interface Submitted {
  c: CsrCase
  crafted: Crafted
  /** The CSR's name, or why kube-apiserver refused to create it. */
  name?: string
  createRefused?: string
}

/**
 * The table of crafted CSRs (test/support/csr-cases.ts), each submitted by its requester to the real
 * kube-apiserver, with kube-controller-manager's signer running and `ironpool controller
 * --approve-poollet-csrs` approving: every approved one is signed and its certificate logs in as
 * exactly the expected poollet (kubectl auth whoami); every refused one is never approved nor signed,
 * and the Warning Event names the rule.
 */
describe('controller --approve-poollet-csrs: crafted CSRs on a real API server with the real signer', function () {
  this.timeout(180_000)
  let plane: ControlPlane
  let controller: ControllerProcess
  const requesters = new Map<Requester, Identity>()
  const submitted: Submitted[] = []
  let foreign: string

  before(async function () {
    ;({plane} = await identityPlane({signingDurationSeconds: 600, hook: this}))
    // The pools the approved cases name: a bootstrap token's CSR is approved only for a pool that exists.
    const admin = new KubeObjects(plane.adminKubeconfig)
    for (const pool of ['p1', 'p2', 'p3', 'p4', 'p5']) await admin.createPool(machine, pool)
    await admin.createPool(volume, 'v1')
    controller = await startController(plane, ['--approve-poollet-csrs'])
    requesters.set('machine bootstrap token', await bootstrapToken(plane, machine))
    requesters.set('volume bootstrap token', await bootstrapToken(plane, volume))
    requesters.set('machine poollet p1', await plane.userIdentity(`${machine.poolletUserPrefix}p1`, [machine.poolletGroup]))
    requesters.set('volume poollet v1', await plane.userIdentity(`${volume.poolletUserPrefix}v1`, [volume.poolletGroup]))
    for (const c of CSR_CASES) {
      const crafted = await c.make()
      const requester = requesters.get(c.requester)
      if (requester === undefined) throw new Error(`no identity ${c.requester}`)
      try {
        submitted.push({c, crafted, name: await submitCsr(requester.kubeconfig, {pem: crafted.pem, signerName: c.signerName, usages: c.usages})})
      } catch (error) {
        // kube-apiserver refuses some itself: what it cannot parse as the signer does (422), a system:masters O (403).
        if (!(error instanceof ApiException && (error.code === 422 || error.code === 403))) throw error
        submitted.push({c, crafted, createRefused: String(error.body)})
      }
    }
    // A CSR of no poollet from a requester of no pool kind (the admin): not ironpool's to judge.
    foreign = await submitCsr(plane.adminKubeconfig, {pem: (await opensslCsr('/CN=system:node:n1/O=system:nodes')).pem})
  })
  after(async () => {
    await controller?.stop()
    await plane?.stop()
  })

  /** `kubectl auth whoami` with the issued certificate and the request's key, against the harness's API server. */
  async function whoami(name: string, certificate: string, keyPem: string): Promise<{username: string; groups: string[]}> {
    const file = path.join(plane.dir, `${name}.kubeconfig`)
    const certPem = Buffer.from(certificate, 'base64').toString('utf8')
    await writeFile(file, renderKubeconfig({server: plane.server, caPem: plane.caPem, user: name, credentials: {clientCertificatePem: certPem, clientKeyPem: keyPem}}), {mode: 0o600})
    const review = JSON.parse(await plane.kubectl(['auth', 'whoami', '-o', 'json'], {kubeconfig: file})) as {status?: {userInfo?: {username?: string; groups?: string[]}}}
    return {username: review.status?.userInfo?.username ?? '', groups: review.status?.userInfo?.groups ?? []}
  }

  for (const c of CSR_CASES) {
    const verdict = c.verdict
    if ('approvedAs' in verdict) {
      it(`approves ${c.name} (${c.requester}); the certificate logs in as exactly ${verdict.approvedAs}`, async () => {
        const s = submitted.find((x) => x.c === c)
        expect(s?.name, s?.createRefused).to.be.a('string')
        const name = s?.name ?? ''
        const csr = await waitFor(`${name} signed`, async () => {
          const read = await readCsr(plane, name)
          return read.status?.certificate ? read : undefined
        }, {timeoutMs: 60_000, intervalMs: 200})
        const condition = csr.status?.conditions?.find((x) => x.type === 'Approved')
        expect(condition).to.deep.include({status: 'True', reason: 'AutoApproved'})
        const who = await whoami(name, csr.status?.certificate ?? '', s?.crafted.keyPem ?? '')
        const kind = verdict.approvedAs.startsWith(volume.poolletUserPrefix) ? volume : machine
        expect(who).to.deep.equal({username: verdict.approvedAs, groups: [kind.poolletGroup, 'system:authenticated']})
        const approval = await waitFor('the approval log line', () => controller.logs().find((l) => l.msg === 'approved a poollet client certificate' && l.csr === name))
        expect(approval.subresource, 'the subresource the SubjectAccessReview checked').to.equal(verdict.subresource)
      })
    } else if (c.signerName !== undefined && c.signerName !== CLIENT_SIGNER) {
      // Outside the approver's field selector (spec.signerName=kubernetes.io/kube-apiserver-client): never cached, never judged.
      it(`leaves ${c.name} (${c.requester}) alone: another signer's CSR is not listed, watched or judged; never approved`, async () => {
        const s = submitted.find((x) => x.c === c)
        const name = s?.name ?? ''
        expect(name, s?.createRefused).to.not.equal('')
        // The foreign CSR, created after every case, has been looked at: this one would have been by now.
        await waitFor('the review of the foreign CSR', () => controller.logs().find((l) => l.csr === foreign))
        expect(controller.logs().filter((l) => l.csr === name), 'no line about it').to.deep.equal([])
        expect((await readCsr(plane, name)).status?.conditions ?? []).to.deep.equal([])
        expect(await csrEvents(plane, name)).to.deep.equal([])
      })
    } else {
      const says =
        verdict.refusedBy === 'subject-access-review'
          ? `may not create certificatesigningrequests/${volume.csrSubresource}`
          : verdict.refusedBy === 'pool-exists'
            ? 'a bootstrap token obtains a certificate only for a pool that exists'
            : `(rule ${verdict.refusedBy})`
      it(`refuses ${c.name} (${c.requester}): ${says}; never approved, never signed`, async () => {
        const s = submitted.find((x) => x.c === c)
        if (s?.createRefused !== undefined) {
          // kube-apiserver itself would not store it (it parses the request as the signer does): nothing to sign.
          const message = (JSON.parse(s.createRefused) as {message?: string}).message ?? s.createRefused
          console.log(`      (kube-apiserver refused to create it: ${message.replace(/Invalid value: "[^"]*"/, 'Invalid value: <the request>')})`)
          return
        }
        const name = s?.name ?? ''
        const line = await waitFor(`the review of ${name}`, () => controller.logs().find((l) => l.msg === 'poollet certificate signing request not approved' && l.csr === name), {timeoutMs: 60_000})
        expect(line.rule, 'the log line names the rule').to.equal(verdict.refusedBy)
        expect(String(line.message)).to.include(says)
        // A requester's Warning Events are bounded (20, then one a minute): past its budget the log line says so, and is all there is.
        if (line.event === undefined) {
          const event = await waitFor(`the Event about ${name}`, async () => (await csrEvents(plane, name)).find((e) => e.reason === 'CertificateNotApproved'))
          expect(event.type).to.equal('Warning')
          expect(event.message).to.include(says)
        } else {
          expect(line.event).to.be.a('string').that.includes('suppressed')
        }
        const csr = await readCsr(plane, name)
        expect(csr.status?.conditions ?? [], 'no Approved, no Denied: left to others').to.deep.equal([])
        expect(csr.status?.certificate, 'no certificate').to.equal(undefined)
      })
    }
  }

  it('leaves a CSR that is no poollet’s, from a requester of no pool kind, alone: no decision, no Event', async () => {
    // Reviewed by now: every case above has been decided, and this one was created last by its own requester.
    await waitFor('the review of the foreign CSR', () => controller.logs().find((l) => l.csr === foreign))
    expect((await readCsr(plane, foreign)).status?.conditions ?? []).to.deep.equal([])
    expect(await csrEvents(plane, foreign)).to.deep.equal([])
  })

  it('has issued certificates for the approved cases only', async () => {
    for (const s of submitted) {
      if (s.name === undefined) continue
      const csr = await readCsr(plane, s.name)
      expect(Boolean(csr.status?.certificate), s.c.name).to.equal('approvedAs' in s.c.verdict)
      expect(approved(csr), s.c.name).to.equal('approvedAs' in s.c.verdict)
    }
  })
})
