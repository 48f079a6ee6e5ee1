/**
 * The CertificateSigningRequest of a poollet's client certificate, and the rules for approving one, as
 * pure functions. The poollet builds its request from poolletCsrTemplate(); the controller's opt-in
 * approver reads every CSR's DER into CsrFacts (src/kube/identity/x509.ts) and judges it here with
 * judgePoolletCsr().
 *
 * The approver is an authority: what it approves, kube-controller-manager's signer signs and
 * kube-apiserver believes. So the rules read the request as those two do, and accept one shape only,
 * the one a poollet sends: Go's x509 parser keeps the *last* CN of a subject and *every* O, the signer
 * copies that parsed subject and every SAN into the certificate, and kube-apiserver takes the CN as the
 * username and each O as a group. A subject of exactly one single-valued CN and one single-valued O
 * leaves nothing to read two ways. Then the requester: a poollet may obtain only its own name (after
 * Kubernetes' `selfnodeclient`), with the SubjectAccessReview on the kind's self subresource; any other
 * requester (a bootstrap token) needs the kind's bootstrap subresource, and may name any pool of it.
 */
import {POOL_KIND_NAMES, POOL_KINDS, type PoolKind} from '../pool-kinds.ts'

/** The signer of client certificates that kube-apiserver trusts. */
export const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client'

/**
 * The usages a poollet requests and IronCore requires, exactly (as a set: order and repeats aside).
 * IronCore requires key encipherment whatever the key type, although an ECDSA key cannot encipher.
 */
export const POOLLET_CSR_USAGES: readonly string[] = ['digital signature', 'key encipherment', 'client auth']

/** The API group the SubjectAccessReview names. */
export const CSR_API_GROUP = 'certificates.k8s.io'

/** What a poollet puts into its CSR: subject CN and O, and the CSR object's signer and usages. */
export interface PoolletCsrTemplate {
  commonName: string
  organization: string
  signerName: string
  usages: readonly string[]
}

export function poolletCsrTemplate(kind: PoolKind, pool: string): PoolletCsrTemplate {
  return {commonName: `${kind.poolletUserPrefix}${pool}`, organization: kind.poolletGroup, signerName: CLIENT_SIGNER, usages: POOLLET_CSR_USAGES}
}

/** One attribute of a subject RDN as encoded: its type (CN, O, OU, ... or a dotted OID), its ASN.1 string type, its value. */
export interface SubjectAttribute {
  type: string
  /** e.g. PrintableString, UTF8String, BMPString; `other` for a value that is no string. */
  stringType: string
  value: string
}

/** What the rules read of a CSR: the object's spec, and the PKCS#10 request's DER as it is encoded. */
export interface CsrFacts {
  signerName: string
  usages: readonly string[]
  /** Why spec.request is not one PEM block holding one DER-encoded PKCS#10 request (v1), or undefined. */
  unreadable?: string
  /** The subject's RDNs in encoded order, each with its attributes. */
  subject: ReadonlyArray<readonly SubjectAttribute[]>
  /** Each requested extension (extensionRequest attribute), e.g. `subjectAltName (dns, uri)`. */
  extensions: readonly string[]
  /** Each attribute of the request other than extensionRequest, by name or OID. */
  attributes: readonly string[]
  /** The request's own signature verifies with its public key. */
  signatureValid: boolean
  /** The request's public key: its algorithm (ECDSA, RSA, Ed25519, ... or the OID), with the curve or the modulus length. */
  publicKey: {algorithm: string; curve?: string; bits?: number}
  /** The request's signature algorithm: the key algorithm it signs with and its hash, e.g. ECDSA with SHA-256 (hash absent for Ed25519 or an unknown OID). */
  signatureAlgorithm: {name: string; hash?: string}
}

/** Who asked: the CSR's spec.username and spec.groups, set by kube-apiserver from the requester's credentials. */
export interface CsrRequester {
  username: string
  groups: readonly string[]
}

/** The rules, in the order they are checked; the first one broken is reported. */
export const CSR_RULES = [
  'encoding',
  'key',
  'signature-algorithm',
  'signature',
  'signer',
  'usages',
  'subject',
  'organization',
  'common-name',
  'pool-name',
  'no-extensions',
  'no-attributes',
  'self',
] as const
export type CsrRule = (typeof CSR_RULES)[number]

export type CsrJudgement =
  /** Every rule holds for this kind: approve once the SubjectAccessReview allows `create` on `subresource`. */
  | {verdict: 'recognised'; kind: PoolKind; pool: string; subresource: string}
  /** A poollet's request by its subject or its requester, but it breaks `rule`: never approved. */
  | {verdict: 'broken'; kind: PoolKind; rule: CsrRule; message: string}
  /** No poollet's request and no poollet's or bootstrapper's requester: left to other approvers, without a word. */
  | {verdict: 'foreign'}

/**
 * The keys and signatures a poollet's request may use, as documented (deploy/poollet/README.md): ECDSA
 * on P-256 (what ironpool's and IronCore's poollets generate) or P-384, or RSA of at least 2048 bits
 * (NIST SP 800-131A; Go's signer would sign RSA-1024, Ed25519 and SHA-1 all the same), signed with
 * SHA-256 or better: ECDSA, or RSA PKCS#1 v1.5 (not RSASSA-PSS, which no poollet sends).
 */
export const CSR_KEY_CURVES: readonly string[] = ['P-256', 'P-384']
export const CSR_RSA_MIN_BITS = 2048
export const CSR_SIGNATURE_HASHES: readonly string[] = ['SHA-256', 'SHA-384', 'SHA-512']

function keyProblem(key: CsrFacts['publicKey']): string | undefined {
  if (key.algorithm === 'ECDSA' && key.curve !== undefined && CSR_KEY_CURVES.includes(key.curve)) return undefined
  if (key.algorithm === 'RSA' && key.bits !== undefined && key.bits >= CSR_RSA_MIN_BITS) return undefined
  const shown = `${key.algorithm}${key.curve === undefined ? '' : ` ${key.curve}`}${key.bits === undefined ? '' : ` ${key.bits} bits`}`
  return `the public key is ${shown}, not ECDSA ${CSR_KEY_CURVES.join(' or ')} nor RSA of at least ${CSR_RSA_MIN_BITS} bits`
}

function signatureAlgorithmProblem(csr: CsrFacts): string | undefined {
  const {name, hash} = csr.signatureAlgorithm
  if (name === csr.publicKey.algorithm && hash !== undefined && CSR_SIGNATURE_HASHES.includes(hash)) return undefined
  const shown = hash === undefined ? name : `${name} with ${hash}`
  return `the request is signed with ${shown}, not ${csr.publicKey.algorithm === 'RSA' ? 'RSA (PKCS#1 v1.5)' : 'ECDSA'} with ${CSR_SIGNATURE_HASHES.join(', ')}`
}

const STRING_TYPES = new Set(['PrintableString', 'UTF8String'])
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

/** A valid name of a cluster-scoped object: a DNS-1123 subdomain of at most 253 characters. */
export function isValidObjectName(name: string): boolean {
  return name.length > 0 && name.length <= 253 && DNS1123_SUBDOMAIN.test(name)
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a)
  const right = new Set(b)
  return left.size === right.size && [...left].every((value) => right.has(value))
}

/** The subject as RFC 4514 writes it (in encoded order; `+` joins a multi-valued RDN), for messages. */
export function subjectText(subject: CsrFacts['subject']): string {
  return subject.map((rdn) => rdn.map((a) => `${a.type}=${a.value}`).join('+')).join(', ') || '(empty)'
}

/** The single CN and single O of a subject of exactly those two single-valued RDNs, or why it is not one. */
function subjectShape(subject: CsrFacts['subject']): {commonName: string; organization: string} | {problem: string} {
  const problem = (why: string) => ({problem: `subject must be one RDN holding one CN and one RDN holding one O, nothing else (${why}): ${subjectText(subject)}`})
  if (subject.length !== 2) return problem(`${subject.length} RDNs`)
  if (subject.some((rdn) => rdn.length !== 1)) return problem('a multi-valued RDN')
  const attributes = subject.map((rdn) => rdn[0] as SubjectAttribute)
  const cn = attributes.filter((a) => a.type === 'CN')
  const o = attributes.filter((a) => a.type === 'O')
  if (cn.length !== 1 || o.length !== 1) return problem(`types ${attributes.map((a) => a.type).join(', ')}`)
  const odd = attributes.find((a) => !STRING_TYPES.has(a.stringType))
  if (odd !== undefined) return problem(`${odd.type} is a ${odd.stringType}, not a PrintableString or UTF8String`)
  return {commonName: (cn[0] as SubjectAttribute).value, organization: (o[0] as SubjectAttribute).value}
}

const KINDS: readonly PoolKind[] = POOL_KIND_NAMES.map((name) => POOL_KINDS[name])

/** The kind whose poollet the requester is, by username prefix or group; undefined for any other requester. */
export function poolletRequesterKind(requester: CsrRequester): PoolKind | undefined {
  return KINDS.find((kind) => requester.username.startsWith(kind.poolletUserPrefix) || requester.groups.includes(kind.poolletGroup))
}

/** The first rule the CSR breaks for this kind, with a message saying what was found, or undefined. */
export function brokenRule(kind: PoolKind, csr: CsrFacts, requester: CsrRequester): {rule: CsrRule; message: string} | undefined {
  const broken = (rule: CsrRule, message: string) => ({rule, message})
  if (csr.unreadable !== undefined) return broken('encoding', csr.unreadable)
  const key = keyProblem(csr.publicKey)
  if (key !== undefined) return broken('key', key)
  const algorithm = signatureAlgorithmProblem(csr)
  if (algorithm !== undefined) return broken('signature-algorithm', algorithm)
  if (!csr.signatureValid) return broken('signature', "the request's signature does not verify with its public key")
  if (csr.signerName !== CLIENT_SIGNER) return broken('signer', `signer is ${csr.signerName}, not ${CLIENT_SIGNER}`)
  if (!sameSet(csr.usages, POOLLET_CSR_USAGES)) return broken('usages', `usages [${csr.usages.join(', ')}] are not exactly [${POOLLET_CSR_USAGES.join(', ')}]`)
  const shape = subjectShape(csr.subject)
  if ('problem' in shape) return broken('subject', shape.problem)
  if (shape.organization !== kind.poolletGroup) return broken('organization', `organization is ${shape.organization}, not ${kind.poolletGroup}`)
  if (!shape.commonName.startsWith(kind.poolletUserPrefix)) return broken('common-name', `common name ${shape.commonName} does not begin with ${kind.poolletUserPrefix}`)
  const pool = shape.commonName.slice(kind.poolletUserPrefix.length)
  if (!isValidObjectName(pool)) return broken('pool-name', `pool name ${JSON.stringify(pool)} in the common name is not a valid object name (a DNS-1123 subdomain)`)
  if (csr.extensions.length > 0) return broken('no-extensions', `extensions requested (${csr.extensions.join('; ')}): a poollet requests none, no subject alternative name of any type`)
  if (csr.attributes.length > 0) return broken('no-attributes', `attributes ${csr.attributes.join(', ')}: a poollet sends none`)
  const poollet = poolletRequesterKind(requester)
  if (poollet !== undefined && !(poollet === kind && requester.username === shape.commonName && requester.groups.includes(kind.poolletGroup))) {
    return broken('self', `requester ${requester.username} is a ${poollet.name} poollet and may request only its own name, not ${shape.commonName}`)
  }
  return undefined
}

/** Every string the subject holds, for telling which kind a broken request claims. */
function subjectValues(csr: CsrFacts): string[] {
  return csr.subject.flatMap((rdn) => rdn.map((a) => a.value))
}

/**
 * The kind a CSR is about: the one whose group is an O of its subject, else the requester's (a poollet,
 * or a bootstrapper by group), else the one whose user prefix appears anywhere in the subject.
 */
function claimedKind(csr: CsrFacts, requester: CsrRequester): PoolKind | undefined {
  const values = subjectValues(csr)
  const organizations = csr.subject.flatMap((rdn) => rdn.filter((a) => a.type === 'O').map((a) => a.value))
  return (
    KINDS.find((kind) => organizations.includes(kind.poolletGroup)) ??
    poolletRequesterKind(requester) ??
    KINDS.find((kind) => requester.groups.includes(kind.bootstrapperGroup)) ??
    KINDS.find((kind) => values.some((value) => value.includes(kind.poolletUserPrefix)))
  )
}

/**
 * Judges a CSR against every kind. Recognised by the kind whose rules all hold (at most one: the O
 * names it), with the subresource the SubjectAccessReview checks: the self one for a poollet renewing
 * its own name, the bootstrap one for any other requester. Otherwise "broken" for the kind it claims,
 * so that the approver can say which rule failed; otherwise foreign.
 */
export function judgePoolletCsr(csr: CsrFacts, requester: CsrRequester): CsrJudgement {
  for (const kind of KINDS) {
    if (brokenRule(kind, csr, requester) === undefined) {
      const shape = subjectShape(csr.subject)
      const pool = 'problem' in shape ? '' : shape.commonName.slice(kind.poolletUserPrefix.length)
      const self = poolletRequesterKind(requester) !== undefined
      return {verdict: 'recognised', kind, pool, subresource: self ? kind.selfCsrSubresource : kind.csrSubresource}
    }
  }
  const claimed = claimedKind(csr, requester)
  if (claimed === undefined) return {verdict: 'foreign'}
  const broken = brokenRule(claimed, csr, requester)
  // A claimed kind whose rules all hold returned above; this only keeps the types honest.
  if (broken === undefined) return {verdict: 'foreign'}
  return {verdict: 'broken', kind: claimed, ...broken}
}
