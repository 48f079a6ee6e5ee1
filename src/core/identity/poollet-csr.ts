/**
 * The CertificateSigningRequest of a poollet's client certificate, and IronCore's rules for approving
 * one (IronCore's `internal/controllers/core/certificate/{compute,storage}`), as pure functions. The
 * poollet builds its request from poolletCsrTemplate(); the controller's opt-in approver judges every
 * CSR with judgePoolletCsr() and then asks a SubjectAccessReview for `create` on the kind's
 * `certificatesigningrequests/<kind>poolclient`. A CSR that IronCore's approver would not approve is not
 * approved here either, so ironpool's poollets work unchanged on an IronCore cluster.
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

/** What the rules read of a CSR: the object's signer and usages, and the PKCS#10 request's subject and SANs. */
export interface CsrFacts {
  signerName: string
  usages: readonly string[]
  commonName: string
  organizations: readonly string[]
  dnsNames: readonly string[]
  emailAddresses: readonly string[]
  ipAddresses: readonly string[]
  uris: readonly string[]
}

/** IronCore's rules, in the order IronCore checks them. */
export const CSR_RULES = ['signer', 'organization', 'no-dns-sans', 'no-email-sans', 'no-ip-sans', 'no-uri-sans', 'common-name', 'usages'] as const
export type CsrRule = (typeof CSR_RULES)[number]

export type CsrJudgement =
  /** Every rule holds for this kind: approve once the SubjectAccessReview allows `create` on `subresource`. */
  | {verdict: 'recognised'; kind: PoolKind; pool: string; subresource: string}
  /** Looks like this kind's poollet (its O or CN prefix) but breaks `rule`: never approved. */
  | {verdict: 'broken'; kind: PoolKind; rule: CsrRule; message: string}
  /** No poollet's request at all: left to other approvers, without a word. */
  | {verdict: 'foreign'}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a)
  const right = new Set(b)
  return left.size === right.size && [...left].every((value) => right.has(value))
}

/** The first of IronCore's rules that the CSR breaks for this kind, with IronCore's message, or undefined. */
export function brokenRule(kind: PoolKind, csr: CsrFacts): {rule: CsrRule; message: string} | undefined {
  const checks: Array<[CsrRule, boolean, string]> = [
    ['signer', csr.signerName === CLIENT_SIGNER, `signer is not ${CLIENT_SIGNER}`],
    ['organization', csr.organizations.length === 1 && csr.organizations[0] === kind.poolletGroup, `organization is not ${kind.poolletGroup}`],
    ['no-dns-sans', csr.dnsNames.length === 0, 'dns subject alternative names are not allowed'],
    ['no-email-sans', csr.emailAddresses.length === 0, 'email subject alternative names are not allowed'],
    ['no-ip-sans', csr.ipAddresses.length === 0, 'ip subject alternative names are not allowed'],
    ['no-uri-sans', csr.uris.length === 0, 'uri subject alternative names are not allowed'],
    ['common-name', csr.commonName.startsWith(kind.poolletUserPrefix), `subject common name does not begin with ${kind.poolletUserPrefix}`],
    ['usages', sameSet(csr.usages, POOLLET_CSR_USAGES), `usages did not match [${POOLLET_CSR_USAGES.join(', ')}]`],
  ]
  const broken = checks.find(([, holds]) => !holds)
  return broken === undefined ? undefined : {rule: broken[0], message: broken[2]}
}

/**
 * Judges a CSR against every kind. Recognised by the first kind whose rules all hold; otherwise
 * "broken" for the kind it claims (its O first, then its CN prefix), so that the approver can say which
 * rule failed; otherwise foreign.
 */
export function judgePoolletCsr(csr: CsrFacts): CsrJudgement {
  const kinds = POOL_KIND_NAMES.map((name) => POOL_KINDS[name])
  for (const kind of kinds) {
    if (brokenRule(kind, csr) === undefined) {
      return {verdict: 'recognised', kind, pool: csr.commonName.slice(kind.poolletUserPrefix.length), subresource: kind.csrSubresource}
    }
  }
  const claimed =
    kinds.find((kind) => csr.organizations.includes(kind.poolletGroup)) ?? kinds.find((kind) => csr.commonName.startsWith(kind.poolletUserPrefix))
  if (claimed === undefined) return {verdict: 'foreign'}
  const broken = brokenRule(claimed, csr)
  // Unreachable: a kind whose rules all hold returned above.
  if (broken === undefined) return {verdict: 'foreign'}
  return {verdict: 'broken', kind: claimed, ...broken}
}
