import {expect} from 'chai'
import {CLIENT_SIGNER, CSR_RULES, judgePoolletCsr, type CsrRequester} from '../../../../src/core/identity/poollet-csr.ts'
import {readCsr} from '../../../../src/kube/identity/x509.ts'
import {CSR_CASES, machine, volume, type Requester} from '../../../support/csr-cases.ts'
import {USAGES} from '../../../support/csr-craft.ts'

/** The requesters as kube-apiserver writes them into spec.username and spec.groups. */
const REQUESTERS: Record<Requester, CsrRequester> = {
  'machine bootstrap token': {username: 'system:bootstrap:abc123', groups: ['system:bootstrappers', machine.bootstrapperGroup, 'system:authenticated']},
  'volume bootstrap token': {username: 'system:bootstrap:def456', groups: ['system:bootstrappers', volume.bootstrapperGroup, 'system:authenticated']},
  'machine poollet p1': {username: `${machine.poolletUserPrefix}p1`, groups: [machine.poolletGroup, 'system:authenticated']},
  'volume poollet v1': {username: `${volume.poolletUserPrefix}v1`, groups: [volume.poolletGroup, 'system:authenticated']},
}

describe('poollet CSR rules on real DER (crafted with openssl and @peculiar/x509)', function () {
  // openssl runs a few dozen times; each takes some milliseconds.
  this.timeout(30_000)

  for (const c of CSR_CASES) {
    const expected = 'approvedAs' in c.verdict ? `recognised, SAR on ${c.verdict.subresource}` : c.verdict.refusedBy === 'subject-access-review' ? 'recognised, left to the SAR' : c.verdict.refusedBy === 'pool-exists' ? 'recognised, left to the pool look-up' : `broken: rule ${c.verdict.refusedBy}`
    it(`${c.name} (${c.requester}): ${expected}`, async () => {
      const crafted = await c.make()
      const facts = await readCsr({signerName: c.signerName ?? CLIENT_SIGNER, usages: c.usages ?? USAGES, request: Buffer.from(crafted.pem)})
      const judgement = judgePoolletCsr(facts, REQUESTERS[c.requester])
      if ('approvedAs' in c.verdict) {
        expect(judgement, JSON.stringify(facts)).to.deep.include({verdict: 'recognised', subresource: c.verdict.subresource})
        expect(judgement.verdict === 'recognised' && `${judgement.kind.poolletUserPrefix}${judgement.pool}`).to.equal(c.verdict.approvedAs)
      } else if (c.verdict.refusedBy === 'subject-access-review') {
        // Every rule holds for another kind: only the SubjectAccessReview on that kind's subresource stands between.
        expect(judgement).to.deep.include({verdict: 'recognised', subresource: volume.csrSubresource})
      } else if (c.verdict.refusedBy === 'pool-exists') {
        // Every rule holds: only the approver's look-up of the pool stands between.
        expect(judgement).to.deep.include({verdict: 'recognised', subresource: machine.csrSubresource})
      } else {
        expect(judgement.verdict, JSON.stringify(facts)).to.equal('broken')
        expect(judgement.verdict === 'broken' && judgement.rule, judgement.verdict === 'broken' ? judgement.message : '').to.equal(c.verdict.refusedBy)
      }
    })
  }

  it('covers every rule with a crafted case', () => {
    const covered = new Set(CSR_CASES.map((c) => ('refusedBy' in c.verdict ? c.verdict.refusedBy : '')))
    for (const rule of CSR_RULES) expect(covered.has(rule), rule).to.be.true
  })

  it('reads the subject as encoded: every RDN and attribute, with its string type', async () => {
    const crafted = CSR_CASES.find((c) => c.name.startsWith('two CNs, the poollet first'))
    const facts = await readCsr({signerName: CLIENT_SIGNER, usages: USAGES, request: Buffer.from((await crafted?.make())?.pem ?? '')})
    expect(facts.subject).to.deep.equal([
      [{type: 'CN', stringType: 'UTF8String', value: `${machine.poolletUserPrefix}p1`}],
      [{type: 'CN', stringType: 'UTF8String', value: 'system:kube-controller-manager'}],
      [{type: 'O', stringType: 'UTF8String', value: machine.poolletGroup}],
    ])
  })

  it('names each SAN type it finds', async () => {
    const dns = CSR_CASES.find((c) => c.name === 'a DNS SAN')
    const facts = await readCsr({signerName: CLIENT_SIGNER, usages: USAGES, request: Buffer.from((await dns?.make())?.pem ?? '')})
    expect(facts.extensions).to.deep.equal(['subjectAltName (dns)'])
  })

  it('leaves a CSR of no poollet, from a requester of no pool kind, to other approvers', async () => {
    const {opensslCsr} = await import('../../../support/csr-craft.ts')
    const crafted = await opensslCsr('/CN=system:node:n1/O=system:nodes')
    const facts = await readCsr({signerName: CLIENT_SIGNER, usages: USAGES, request: Buffer.from(crafted.pem)})
    expect(judgePoolletCsr(facts, {username: 'system:node:n1', groups: ['system:nodes']})).to.deep.equal({verdict: 'foreign'})
  })
})
