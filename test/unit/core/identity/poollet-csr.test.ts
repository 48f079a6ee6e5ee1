import {expect} from 'chai'
import {POOL_KIND_NAMES, POOL_KINDS} from '../../../../src/core/pool-kinds.ts'
import {CLIENT_SIGNER, CSR_RULES, judgePoolletCsr, poolletCsrTemplate, POOLLET_CSR_USAGES, type CsrFacts, type CsrRule} from '../../../../src/core/identity/poollet-csr.ts'

const machine = POOL_KINDS.machine
const volume = POOL_KINDS.volume

/** The CSR a machine poollet of p1 makes: every rule holds. */
function valid(overrides: Partial<CsrFacts> = {}): CsrFacts {
  const template = poolletCsrTemplate(machine, 'p1')
  return {
    signerName: template.signerName,
    usages: [...template.usages],
    commonName: template.commonName,
    organizations: [template.organization],
    dnsNames: [],
    emailAddresses: [],
    ipAddresses: [],
    uris: [],
    ...overrides,
  }
}

/** One named case per IronCore rule: the CSR that breaks it, and nothing else. */
const BROKEN: Array<{rule: CsrRule; name: string; csr: CsrFacts}> = [
  {rule: 'signer', name: 'another signer (kubelet client)', csr: valid({signerName: 'kubernetes.io/kube-apiserver-client-kubelet'})},
  {rule: 'organization', name: 'wrong O', csr: valid({organizations: ['system:masters']})},
  {rule: 'organization', name: 'an extra O besides the poollet group', csr: valid({organizations: [machine.poolletGroup, 'system:masters']})},
  {rule: 'no-dns-sans', name: 'a DNS SAN', csr: valid({dnsNames: ['p1.example.com']})},
  {rule: 'no-email-sans', name: 'an email SAN', csr: valid({emailAddresses: ['p1@example.com']})},
  {rule: 'no-ip-sans', name: 'an IP SAN', csr: valid({ipAddresses: ['10.0.0.1']})},
  {rule: 'no-uri-sans', name: 'a URI SAN', csr: valid({uris: ['spiffe://p1']})},
  {rule: 'common-name', name: 'CN of another kind (a volume poollet) with the machine group', csr: valid({commonName: `${volume.poolletUserPrefix}p1`})},
  {rule: 'common-name', name: 'CN without the poollet prefix', csr: valid({commonName: 'p1'})},
  {rule: 'usages', name: 'an extra usage (server auth)', csr: valid({usages: [...POOLLET_CSR_USAGES, 'server auth']})},
  {rule: 'usages', name: 'a usage missing (no key encipherment)', csr: valid({usages: ['digital signature', 'client auth']})},
]

describe('poollet CSR rules (IronCore’s approver)', () => {
  it("recognises the poollet's own request, for each kind, with its pool and the SAR subresource", () => {
    for (const name of POOL_KIND_NAMES) {
      const kind = POOL_KINDS[name]
      const t = poolletCsrTemplate(kind, 'pool-a')
      const judgement = judgePoolletCsr(valid({commonName: t.commonName, organizations: [t.organization]}))
      expect(judgement).to.deep.include({verdict: 'recognised', pool: 'pool-a', subresource: `${name}poolclient`})
      expect(judgement.verdict === 'recognised' && judgement.kind.name).to.equal(name)
    }
  })

  it('requests exactly what IronCore requires: its signer, CN <prefix><pool>, O the group, usages digital signature, key encipherment, client auth', () => {
    expect(poolletCsrTemplate(machine, 'p1')).to.deep.equal({
      commonName: 'compute.ironcore.dev:system:machinepool:p1',
      organization: 'compute.ironcore.dev:system:machinepools',
      signerName: CLIENT_SIGNER,
      usages: ['digital signature', 'key encipherment', 'client auth'],
    })
    expect(POOL_KINDS.bucket.bootstrapperGroup).to.equal('system:bootstrappers:storage-ironcore-dev:bucketpools')
  })

  it('takes usages as a set: order and repeats do not matter', () => {
    expect(judgePoolletCsr(valid({usages: ['client auth', 'digital signature', 'key encipherment', 'client auth']})).verdict).to.equal('recognised')
  })

  for (const {rule, name, csr} of BROKEN) {
    it(`does not approve ${name} (rule ${rule})`, () => {
      const judgement = judgePoolletCsr(csr)
      expect(judgement.verdict, name).to.equal('broken')
      expect(judgement.verdict === 'broken' && judgement.rule).to.equal(rule)
    })
  }

  it('covers every rule with a case', () => {
    expect(new Set(BROKEN.map((c) => c.rule))).to.deep.equal(new Set(CSR_RULES))
  })

  it('leaves a CSR that claims no pool kind (neither O nor CN) to other approvers', () => {
    expect(judgePoolletCsr(valid({commonName: 'system:node:n1', organizations: ['system:nodes']}))).to.deep.equal({verdict: 'foreign'})
  })
})
