/**
 * The table of crafted CSRs, shared by the unit test of the rules on real DER
 * (test/unit/kube/identity/csr-der.test.ts) and the integration test on the real API server and signer
 * (test/integration/identity/csr-approver.test.ts): each a request made as real DER, who sends it, and
 * the verdict: approved as which user, or refused by which rule.
 */
import * as x509 from '@peculiar/x509'

import type {CsrRule} from '../../src/core/identity/poollet-csr.ts'
import {POOL_KINDS} from '../../src/core/pool-kinds.ts'
import {generateCsr} from '../../src/kube/identity/x509.ts'
import {csrPem, derOf, KEYS, opensslCsr, peculiarCsr, poolletSubject, SAN, USAGES, withBadSignature, withLongFormLength, withTrailingBytes, type Crafted} from './csr-craft.ts'

export const machine = POOL_KINDS.machine
export const volume = POOL_KINDS.volume

/** Who sends a case's CSR: a bootstrap token of a kind, or a poollet's own certificate. */
export type Requester = 'machine bootstrap token' | 'volume bootstrap token' | 'machine poollet p1' | 'volume poollet v1'

export interface CsrCase {
  name: string
  requester: Requester
  make(): Promise<Crafted>
  signerName?: string
  usages?: string[]
  /**
   * approved: the user the certificate must log in as (`kubectl auth whoami`), and the subresource the
   * SubjectAccessReview checks; refused: the rule (or the SubjectAccessReview) that refuses it.
   */
  verdict: {approvedAs: string; subresource: string} | {refusedBy: CsrRule | 'subject-access-review' | 'pool-exists'}
}

const P = machine.poolletUserPrefix
const G = machine.poolletGroup
const KCM = 'system:kube-controller-manager'
const own = (kind = machine, pool = 'p1') => generateCsr({commonName: `${kind.poolletUserPrefix}${pool}`, organization: kind.poolletGroup}).then(({csrPem: pem, keyPem}) => ({pem, keyPem}))
const approved = (user: string, subresource = machine.csrSubresource) => ({approvedAs: user, subresource})
const refused = (rule: CsrRule | 'subject-access-review' | 'pool-exists') => ({refusedBy: rule})

export const CSR_CASES: CsrCase[] = [
  // Approved: the requests a poollet makes, however a correct encoder lays them out.
  {name: "ironpool's poollet request (CN then O, PrintableString)", requester: 'machine bootstrap token', make: () => own(machine, 'p1'), verdict: approved(`${P}p1`)},
  {name: "Go's layout (O then CN), as IronCore's poollets write it", requester: 'machine bootstrap token', make: () => peculiarCsr({subject: [{O: [G]}, {CN: [`${P}p2`]}]}), verdict: approved(`${P}p2`)},
  {name: "openssl's (UTF8String)", requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p3/O=${G}`), verdict: approved(`${P}p3`)},
  {name: 'a poollet renewing its own name', requester: 'machine poollet p1', make: () => own(machine, 'p1'), verdict: approved(`${P}p1`, machine.selfCsrSubresource)},
  {name: 'an RSA 2048 key (openssl, SHA-256)', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p4/O=${G}`, {key: KEYS.rsa(2048)}), verdict: approved(`${P}p4`)},
  {name: 'an ECDSA P-384 key signed with SHA-384', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p5/O=${G}`, {key: KEYS.ec('P-384'), digest: 'sha384'}), verdict: approved(`${P}p5`)},
  {name: "a volume bootstrap token's volume poollet", requester: 'volume bootstrap token', make: () => own(volume, 'v1'), verdict: approved(`${volume.poolletUserPrefix}v1`, volume.csrSubresource)},
  // The subject: one CN, one O, single-valued, nothing else.
  {name: 'two CNs, the poollet first (Go keeps the last)', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p1/CN=${KCM}/O=${G}`), verdict: refused('subject')},
  {name: 'two CNs, the poollet last', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${KCM}/CN=${P}p1/O=${G}`), verdict: refused('subject')},
  {name: 'a multi-valued RDN CN+CN', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p1+CN=${KCM}/O=${G}`, {multivalueRdn: true}), verdict: refused('subject')},
  {name: 'a multi-valued RDN CN+O', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p1+O=${G}`, {multivalueRdn: true}), verdict: refused('subject')},
  {name: 'an extra O system:masters in the same RDN', requester: 'machine bootstrap token', make: () => peculiarCsr({subject: [{CN: [`${P}p1`]}, {O: [G, 'system:masters']}]}), verdict: refused('subject')},
  {name: 'an extra O system:masters in another RDN', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p1/O=${G}/O=system:masters`), verdict: refused('subject')},
  {name: 'an extra O kubeadm:cluster-admins (cluster-admin under kubeadm) in the same RDN', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p1/O=${G}+O=kubeadm:cluster-admins`, {multivalueRdn: true}), verdict: refused('subject')},
  {name: 'an extra O kubeadm:cluster-admins in another RDN', requester: 'machine bootstrap token', make: () => peculiarCsr({subject: [{CN: [`${P}p1`]}, {O: [G]}, {O: ['kubeadm:cluster-admins']}]}), verdict: refused('subject')},
  {name: 'an OU', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p1/O=${G}/OU=ops`), verdict: refused('subject')},
  {name: 'a serialNumber', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p1/O=${G}/serialNumber=1`), verdict: refused('subject')},
  {name: 'a BMPString CN', requester: 'machine bootstrap token', make: () => peculiarCsr({subject: [{CN: [{bmpString: `${P}p1`}]}, {O: [G]}]}), verdict: refused('subject')},
  {name: 'O system:masters instead of the group', requester: 'machine bootstrap token', make: () => peculiarCsr({subject: [{CN: [`${P}p1`]}, {O: ['system:masters']}]}), verdict: refused('organization')},
  {name: "another kind's group as O", requester: 'machine bootstrap token', make: () => peculiarCsr({subject: [{CN: [`${P}p1`]}, {O: [volume.poolletGroup]}]}), verdict: refused('common-name')},
  // The common name: the kind's prefix at its start, then a valid object name.
  {name: 'the prefix in the middle of the CN', requester: 'machine bootstrap token', make: () => peculiarCsr({subject: [{CN: [`x${P}p1`]}, {O: [G]}]}), verdict: refused('common-name')},
  {name: 'the prefix at the end of the CN', requester: 'machine bootstrap token', make: () => peculiarCsr({subject: [{CN: [`${KCM}:${P}`]}, {O: [G]}]}), verdict: refused('common-name')},
  {name: 'a pool name that is no object name', requester: 'machine bootstrap token', make: () => peculiarCsr({subject: [{CN: [`${P}p1:${KCM}`]}, {O: [G]}]}), verdict: refused('pool-name')},
  {name: 'an empty pool name', requester: 'machine bootstrap token', make: () => peculiarCsr({subject: [{CN: [P]}, {O: [G]}]}), verdict: refused('pool-name')},
  // No extension, no attribute.
  {name: 'a DNS SAN', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p1/O=${G}`, {addext: ['subjectAltName=DNS:p1.example.com']}), verdict: refused('no-extensions')},
  {name: 'an IP SAN', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p1/O=${G}`, {addext: ['subjectAltName=IP:10.0.0.1']}), verdict: refused('no-extensions')},
  {name: 'an email SAN', requester: 'machine bootstrap token', make: () => peculiarCsr({subject: poolletSubject(machine, 'p1'), extensions: [SAN.email()]}), verdict: refused('no-extensions')},
  {name: 'a URI SAN', requester: 'machine bootstrap token', make: () => peculiarCsr({subject: poolletSubject(machine, 'p1'), extensions: [SAN.uri()]}), verdict: refused('no-extensions')},
  {name: 'a CA basic constraint', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p1/O=${G}`, {addext: ['basicConstraints=critical,CA:TRUE']}), verdict: refused('no-extensions')},
  {name: 'a challengePassword attribute', requester: 'machine bootstrap token', make: () => peculiarCsr({subject: poolletSubject(machine, 'p1'), attributes: [new x509.ChallengePasswordAttribute('secret')]}), verdict: refused('no-attributes')},
  // The CSR object: signer and usages.
  {name: 'server auth besides the usages', requester: 'machine bootstrap token', make: () => own(), usages: [...USAGES, 'server auth'], verdict: refused('usages')},
  {name: 'server auth instead of client auth', requester: 'machine bootstrap token', make: () => own(), usages: ['digital signature', 'key encipherment', 'server auth'], verdict: refused('usages')},
  {name: 'another signerName (kubelet client)', requester: 'machine bootstrap token', make: () => own(), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', verdict: refused('signer')},
  // Keys and signatures as documented: ECDSA P-256/P-384 or RSA of at least 2048 bits, SHA-256 or better.
  {name: 'an RSA 1024 key', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p1/O=${G}`, {key: KEYS.rsa(1024)}), verdict: refused('key')},
  {name: 'an Ed25519 key', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p1/O=${G}`, {key: KEYS.ed25519()}), verdict: refused('key')},
  {name: 'RSA 2048 signed with SHA-1', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p1/O=${G}`, {key: KEYS.rsa(2048), digest: 'sha1'}), verdict: refused('signature-algorithm')},
  {name: 'ECDSA P-256 signed with SHA-1', requester: 'machine bootstrap token', make: () => opensslCsr(`/CN=${P}p1/O=${G}`, {digest: 'sha1'}), verdict: refused('signature-algorithm')},
  // The encoding and the signature.
  {name: 'a signature that does not verify', requester: 'machine bootstrap token', make: async () => withBadSignature(await own()), verdict: refused('signature')},
  {name: 'bytes after the DER', requester: 'machine bootstrap token', make: async () => withTrailingBytes(await own()), verdict: refused('encoding')},
  {name: 'a BER (non-minimal) length', requester: 'machine bootstrap token', make: async () => withLongFormLength(await own()), verdict: refused('encoding')},
  {name: 'text before the PEM block', requester: 'machine bootstrap token', make: async () => {
    const c = await own()
    return {...c, pem: `junk\n${c.pem}`}
  }, verdict: refused('encoding')},
  {name: 'a second PEM block after the first', requester: 'machine bootstrap token', make: async () => {
    const c = await own()
    const other = await opensslCsr(`/CN=${KCM}/O=${G}`)
    return {...c, pem: `${c.pem}${csrPem(derOf(other.pem))}`}
  }, verdict: refused('encoding')},
  // Requester and subject.
  {name: "a poollet asking for another pool's name", requester: 'machine poollet p1', make: () => own(machine, 'p2'), verdict: refused('self')},
  {name: "a poollet asking for another kind's poollet of its name", requester: 'volume poollet v1', make: () => own(machine, 'v1'), verdict: refused('self')},
  {name: 'a machine bootstrap token asking for a volume poollet', requester: 'machine bootstrap token', make: () => own(volume, 'v2'), verdict: refused('subject-access-review')},
  {name: 'a bootstrap token asking for a pool that does not exist', requester: 'machine bootstrap token', make: () => own(machine, 'nowhere'), verdict: refused('pool-exists')},
]

