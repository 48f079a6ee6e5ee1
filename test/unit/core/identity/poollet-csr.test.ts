import {expect} from 'chai'
import {POOL_KIND_NAMES, POOL_KINDS} from '../../../../src/core/pool-kinds.ts'
import {
  CLIENT_SIGNER,
  isValidObjectName,
  judgePoolletCsr,
  poolletCsrTemplate,
  POOLLET_CSR_USAGES,
  subjectText,
  type CsrFacts,
  type CsrRequester,
} from '../../../../src/core/identity/poollet-csr.ts'

const machine = POOL_KINDS.machine
const volume = POOL_KINDS.volume
const BOOTSTRAP: CsrRequester = {username: 'system:bootstrap:abc123', groups: ['system:bootstrappers', machine.bootstrapperGroup, 'system:authenticated']}

/** What x509.ts reads of the request a poollet of this kind and pool makes: every rule holds. (The DER itself: test/unit/kube/identity/csr-der.test.ts.) */
function facts(kind = machine, pool = 'p1', overrides: Partial<CsrFacts> = {}): CsrFacts {
  const t = poolletCsrTemplate(kind, pool)
  return {
    signerName: t.signerName,
    usages: [...t.usages],
    subject: [[{type: 'CN', stringType: 'PrintableString', value: t.commonName}], [{type: 'O', stringType: 'PrintableString', value: t.organization}]],
    extensions: [],
    attributes: [],
    signatureValid: true,
    publicKey: {algorithm: 'ECDSA', curve: 'P-256'},
    signatureAlgorithm: {name: 'ECDSA', hash: 'SHA-256'},
    ...overrides,
  }
}

describe('poollet CSR rules', () => {
  it("recognises each kind's poollet request from a bootstrap token, with its pool and the bootstrap subresource", () => {
    for (const name of POOL_KIND_NAMES) {
      const kind = POOL_KINDS[name]
      const judgement = judgePoolletCsr(facts(kind, 'pool-a'), {username: 'system:bootstrap:x', groups: [kind.bootstrapperGroup]})
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
    expect(POOL_KINDS.bucket.selfCsrSubresource).to.equal('selfbucketpoolclient')
  })

  it('takes usages as a set: order and repeats do not matter', () => {
    expect(judgePoolletCsr(facts(machine, 'p1', {usages: ['client auth', 'digital signature', 'key encipherment', 'client auth']}), BOOTSTRAP).verdict).to.equal('recognised')
    expect(POOLLET_CSR_USAGES).to.have.length(3)
  })

  it('the self rule: a poollet renews its own name on the self subresource, and gets no other name, of no kind', () => {
    const p1: CsrRequester = {username: `${machine.poolletUserPrefix}p1`, groups: [machine.poolletGroup, 'system:authenticated']}
    expect(judgePoolletCsr(facts(machine, 'p1'), p1)).to.deep.include({verdict: 'recognised', subresource: 'selfmachinepoolclient'})
    expect(judgePoolletCsr(facts(machine, 'p2'), p1)).to.deep.include({verdict: 'broken', rule: 'self'})
    expect(judgePoolletCsr(facts(volume, 'p1'), p1)).to.deep.include({verdict: 'broken', rule: 'self'})
    // A member of the poollet group under another name owns no pool: it is a poollet requester with no name of its own.
    expect(judgePoolletCsr(facts(machine, 'p1'), {username: 'pool-operator', groups: [machine.poolletGroup]})).to.deep.include({verdict: 'broken', rule: 'self'})
    // The poollet's name without its group: still a poollet requester (by username), and not in the group.
    expect(judgePoolletCsr(facts(machine, 'p1'), {username: p1.username, groups: []})).to.deep.include({verdict: 'broken', rule: 'self'})
  })

  it('accepts as pool names only valid object names (DNS-1123 subdomains)', () => {
    for (const good of ['p1', 'a.b-c', 'x'.repeat(253)]) expect(isValidObjectName(good), good).to.be.true
    for (const bad of ['', 'P1', 'p1:x', '-p1', 'p1.', 'a..b', 'x'.repeat(254), 'p 1']) expect(isValidObjectName(bad), bad).to.be.false
  })

  it('says in its message what it found', () => {
    const twoCns = facts(machine, 'p1', {subject: [[{type: 'CN', stringType: 'UTF8String', value: 'a'}, {type: 'CN', stringType: 'UTF8String', value: 'b'}], [{type: 'O', stringType: 'UTF8String', value: machine.poolletGroup}]]})
    const judgement = judgePoolletCsr(twoCns, BOOTSTRAP)
    expect(judgement.verdict === 'broken' && judgement.message).to.include('a multi-valued RDN').and.include(`CN=a+CN=b, O=${machine.poolletGroup}`)
    expect(subjectText([])).to.equal('(empty)')
  })

  describe('keys and signatures: ECDSA P-256 or P-384, or RSA of at least 2048 bits, signed with SHA-256 or better', () => {
    const cases: Array<{what: string; publicKey: CsrFacts['publicKey']; signatureAlgorithm: CsrFacts['signatureAlgorithm']; rule?: string; says?: string}> = [
      {what: 'ECDSA P-256, SHA-256', publicKey: {algorithm: 'ECDSA', curve: 'P-256'}, signatureAlgorithm: {name: 'ECDSA', hash: 'SHA-256'}},
      {what: 'ECDSA P-384, SHA-384', publicKey: {algorithm: 'ECDSA', curve: 'P-384'}, signatureAlgorithm: {name: 'ECDSA', hash: 'SHA-384'}},
      {what: 'ECDSA P-256, SHA-512', publicKey: {algorithm: 'ECDSA', curve: 'P-256'}, signatureAlgorithm: {name: 'ECDSA', hash: 'SHA-512'}},
      {what: 'RSA 2048, SHA-256', publicKey: {algorithm: 'RSA', bits: 2048}, signatureAlgorithm: {name: 'RSA', hash: 'SHA-256'}},
      {what: 'RSA 4096, SHA-384', publicKey: {algorithm: 'RSA', bits: 4096}, signatureAlgorithm: {name: 'RSA', hash: 'SHA-384'}},
      {what: 'RSA 2047', publicKey: {algorithm: 'RSA', bits: 2047}, signatureAlgorithm: {name: 'RSA', hash: 'SHA-256'}, rule: 'key', says: 'the public key is RSA 2047 bits, not ECDSA P-256 or P-384 nor RSA of at least 2048 bits'},
      {what: 'RSA 1024', publicKey: {algorithm: 'RSA', bits: 1024}, signatureAlgorithm: {name: 'RSA', hash: 'SHA-256'}, rule: 'key', says: 'RSA 1024 bits'},
      {what: 'ECDSA P-521', publicKey: {algorithm: 'ECDSA', curve: 'P-521'}, signatureAlgorithm: {name: 'ECDSA', hash: 'SHA-512'}, rule: 'key', says: 'ECDSA P-521'},
      {what: 'ECDSA secp256k1', publicKey: {algorithm: 'ECDSA', curve: 'secp256k1'}, signatureAlgorithm: {name: 'ECDSA', hash: 'SHA-256'}, rule: 'key', says: 'ECDSA secp256k1'},
      {what: 'Ed25519', publicKey: {algorithm: 'Ed25519'}, signatureAlgorithm: {name: 'Ed25519'}, rule: 'key', says: 'the public key is Ed25519'},
      {what: 'ECDSA P-256 signed with SHA-1', publicKey: {algorithm: 'ECDSA', curve: 'P-256'}, signatureAlgorithm: {name: 'ECDSA', hash: 'SHA-1'}, rule: 'signature-algorithm', says: 'signed with ECDSA with SHA-1, not ECDSA with SHA-256, SHA-384, SHA-512'},
      {what: 'ECDSA P-256 signed with SHA-224', publicKey: {algorithm: 'ECDSA', curve: 'P-256'}, signatureAlgorithm: {name: 'ECDSA', hash: 'SHA-224'}, rule: 'signature-algorithm', says: 'SHA-224'},
      {what: 'RSA 2048 signed with SHA-1', publicKey: {algorithm: 'RSA', bits: 2048}, signatureAlgorithm: {name: 'RSA', hash: 'SHA-1'}, rule: 'signature-algorithm', says: 'not RSA (PKCS#1 v1.5) with SHA-256'},
      {what: 'RSA 2048 signed with RSASSA-PSS', publicKey: {algorithm: 'RSA', bits: 2048}, signatureAlgorithm: {name: 'RSASSA-PSS'}, rule: 'signature-algorithm', says: 'signed with RSASSA-PSS'},
      {what: 'an ECDSA key with an RSA signature algorithm', publicKey: {algorithm: 'ECDSA', curve: 'P-256'}, signatureAlgorithm: {name: 'RSA', hash: 'SHA-256'}, rule: 'signature-algorithm', says: 'signed with RSA with SHA-256'},
      {what: 'an unknown signature OID', publicKey: {algorithm: 'ECDSA', curve: 'P-256'}, signatureAlgorithm: {name: '1.2.3.4'}, rule: 'signature-algorithm', says: 'signed with 1.2.3.4'},
    ]
    for (const c of cases) {
      it(`${c.what}: ${c.rule === undefined ? 'recognised' : `refused by rule ${c.rule}`}`, () => {
        const judgement = judgePoolletCsr(facts(machine, 'p1', {publicKey: c.publicKey, signatureAlgorithm: c.signatureAlgorithm}), BOOTSTRAP)
        if (c.rule === undefined) expect(judgement.verdict).to.equal('recognised')
        else {
          expect(judgement).to.deep.include({verdict: 'broken', rule: c.rule})
          expect(judgement.verdict === 'broken' && judgement.message).to.include(c.says)
        }
      })
    }
  })

  it('leaves a CSR that claims no pool kind, from a requester of none, to other approvers', () => {
    const node = facts(machine, 'p1', {subject: [[{type: 'CN', stringType: 'UTF8String', value: 'system:node:n1'}], [{type: 'O', stringType: 'UTF8String', value: 'system:nodes'}]]})
    expect(judgePoolletCsr(node, {username: 'system:node:n1', groups: ['system:nodes']})).to.deep.equal({verdict: 'foreign'})
    // The same CSR from a machine bootstrap token is that kind's business: refused, with the rule.
    expect(judgePoolletCsr(node, BOOTSTRAP)).to.deep.include({verdict: 'broken', rule: 'organization'})
  })

  describe('each rule says what it found (found undefended by npm run mutation, issue 30)', () => {
    const cn = (value: string, stringType = 'PrintableString') => [{type: 'CN', stringType, value}]
    const o = (value: string, stringType = 'PrintableString') => [{type: 'O', stringType, value}]
    const P1 = `${machine.poolletUserPrefix}p1`
    const cases: Array<[string, Partial<CsrFacts>, string, string]> = [
      ['unreadable', {unreadable: 'the PEM block is not canonical base64'}, 'encoding', 'the PEM block is not canonical base64'],
      ['a bad signature', {signatureValid: false}, 'signature', "the request's signature does not verify with its public key"],
      ['another signer', {signerName: 'kubernetes.io/kubelet-serving'}, 'signer', `signer is kubernetes.io/kubelet-serving, not ${CLIENT_SIGNER}`],
      ['server auth instead of client auth', {usages: ['digital signature', 'key encipherment', 'server auth']}, 'usages', 'usages [digital signature, key encipherment, server auth] are not exactly [digital signature, key encipherment, client auth]'],
      ['one usage missing', {usages: ['digital signature', 'client auth']}, 'usages', 'usages [digital signature, client auth] are not exactly'],
      ['one usage more', {usages: [...POOLLET_CSR_USAGES, 'server auth']}, 'usages', 'usages [digital signature, key encipherment, client auth, server auth] are not exactly'],
      ['three RDNs', {subject: [cn(P1), o(machine.poolletGroup), [{type: 'OU', stringType: 'PrintableString', value: 'x'}]]}, 'subject', `(3 RDNs): CN=${P1}, O=${machine.poolletGroup}, OU=x`],
      ['CN and OU', {subject: [cn(P1), [{type: 'OU', stringType: 'PrintableString', value: machine.poolletGroup}]]}, 'subject', '(types CN, OU)'],
      ['OU and O', {subject: [[{type: 'OU', stringType: 'PrintableString', value: P1}], o(machine.poolletGroup)]}, 'subject', '(types OU, O)'],
      ['a BMPString', {subject: [cn(P1, 'BMPString'), o(machine.poolletGroup)]}, 'subject', '(CN is a BMPString, not a PrintableString or UTF8String)'],
      ['a UTF8String organization', {subject: [cn(P1), o('system:nodes', 'UTF8String')]}, 'organization', `organization is system:nodes, not ${machine.poolletGroup}`],
      ['another prefix', {subject: [cn('system:node:p1'), o(machine.poolletGroup)]}, 'common-name', `common name system:node:p1 does not begin with ${machine.poolletUserPrefix}`],
      ['an invalid pool name', {subject: [cn(`${machine.poolletUserPrefix}P1`), o(machine.poolletGroup)]}, 'pool-name', 'pool name "P1" in the common name is not a valid object name (a DNS-1123 subdomain)'],
      ['an empty pool name', {subject: [cn(machine.poolletUserPrefix), o(machine.poolletGroup)]}, 'pool-name', 'pool name ""'],
      ['two extensions', {extensions: ['subjectAltName (dns)', 'keyUsage']}, 'no-extensions', 'extensions requested (subjectAltName (dns); keyUsage): a poollet requests none, no subject alternative name of any type'],
      ['two attributes', {attributes: ['challengePassword', 'unstructuredName']}, 'no-attributes', 'attributes challengePassword, unstructuredName: a poollet sends none'],
    ]
    for (const [what, overrides, rule, says] of cases) {
      it(`${what}: rule ${rule}`, () => {
        const judgement = judgePoolletCsr(facts(machine, 'p1', overrides), BOOTSTRAP)
        expect(judgement).to.deep.include({verdict: 'broken', rule})
        expect(judgement.verdict === 'broken' && judgement.message).to.include(says)
        expect(judgement.verdict === 'broken' && judgement.kind.name).to.equal('machine')
      })
    }

    it('an RSASSA-PSS key is no RSA key, however long; a signature algorithm without a hash is said without one', () => {
      const pss = judgePoolletCsr(facts(machine, 'p1', {publicKey: {algorithm: 'RSASSA-PSS', bits: 2048}, signatureAlgorithm: {name: 'RSASSA-PSS'}}), BOOTSTRAP)
      expect(pss.verdict === 'broken' && `${pss.rule}: ${pss.message}`).to.equal('key: the public key is RSASSA-PSS 2048 bits, not ECDSA P-256 or P-384 nor RSA of at least 2048 bits')
      const ed = judgePoolletCsr(facts(machine, 'p1', {publicKey: {algorithm: 'Ed25519'}, signatureAlgorithm: {name: 'Ed25519'}}), BOOTSTRAP)
      expect(ed.verdict === 'broken' && ed.message).to.equal('the public key is Ed25519, not ECDSA P-256 or P-384 nor RSA of at least 2048 bits')
      const noHash = judgePoolletCsr(facts(machine, 'p1', {signatureAlgorithm: {name: 'Ed25519'}}), BOOTSTRAP)
      expect(noHash.verdict === 'broken' && noHash.message).to.equal('the request is signed with Ed25519, not ECDSA with SHA-256, SHA-384, SHA-512')
    })

    it('a requester in two kinds\' poollet groups is the first kind\'s poollet: it may not request the other kind\'s name', () => {
      const both: CsrRequester = {username: `${volume.poolletUserPrefix}v1`, groups: [machine.poolletGroup, volume.poolletGroup]}
      expect(judgePoolletCsr(facts(volume, 'v1'), both)).to.deep.include({verdict: 'broken', rule: 'self'})
    })

    it('a CN that reads as a kind\'s group claims no kind: only an O does', () => {
      const csr = facts(machine, 'p1', {subject: [cn(volume.poolletGroup), o('junk')]})
      expect(judgePoolletCsr(csr, {username: 'someone', groups: []})).to.deep.equal({verdict: 'foreign'})
    })

    it('the self rule names the requester, its kind and the name it asked for', () => {
      const p1: CsrRequester = {username: P1, groups: [machine.poolletGroup]}
      const judgement = judgePoolletCsr(facts(machine, 'p2'), p1)
      expect(judgement.verdict === 'broken' && judgement.message).to.equal(`requester ${P1} is a machine poollet and may request only its own name, not ${machine.poolletUserPrefix}p2`)
    })

    it('the kind a broken request claims: its O, else the requester (a poollet by group, a bootstrapper by group), else a user prefix anywhere in the subject', () => {
      const junk = (value: string) => facts(machine, 'p1', {subject: [cn(value), o('junk')]})
      const stranger: CsrRequester = {username: 'someone', groups: []}
      const kindOf = (csr: CsrFacts, requester: CsrRequester) => {
        const j = judgePoolletCsr(csr, requester)
        return j.verdict === 'broken' ? `${j.kind.name} ${j.rule}` : j.verdict
      }
      expect(kindOf(facts(volume, 'v1', {signatureValid: false}), BOOTSTRAP)).to.equal('volume signature')
      expect(kindOf(junk('x'), {username: 'someone', groups: [volume.poolletGroup]})).to.equal('volume organization')
      expect(kindOf(junk('x'), {username: 'system:bootstrap:q', groups: [volume.bootstrapperGroup]})).to.equal('volume organization')
      expect(kindOf(junk(`${POOL_KINDS.bucket.poolletUserPrefix}b1`), stranger)).to.equal('bucket organization')
      expect(kindOf(junk('x'), stranger)).to.equal('foreign')
    })

    it('a recognised request names its pool, on the bootstrap subresource for a bootstrapper', () => {
      expect(judgePoolletCsr(facts(volume, 'v-1.a'), {username: 'system:bootstrap:q', groups: [volume.bootstrapperGroup]})).to.deep.include({verdict: 'recognised', pool: 'v-1.a', subresource: volume.csrSubresource})
    })
  })
})
