/**
 * Certificate requests of any shape, as real DER, for the approver's tests: with @peculiar/x509 (any
 * RDN layout, string type, extension or attribute) or with the machine's openssl (`-subj`,
 * `-multivalue-rdn`, `-addext`), each with its private key so that an issued certificate can be used.
 * Made in the test, never committed.
 */
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import {execFile} from 'node:child_process'
import {webcrypto} from 'node:crypto'
import {mkdtemp, readFile, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {promisify} from 'node:util'
import {POOLLET_CSR_USAGES} from '../../src/core/identity/poollet-csr.ts'
import type {PoolKind} from '../../src/core/pool-kinds.ts'

x509.cryptoProvider.set(webcrypto)

const run = promisify(execFile)
const ALGORITHM = {name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256'}

export interface Crafted {
  /** The PEM text that goes (base64) into spec.request. */
  pem: string
  keyPem: string
}

function pem(label: string, der: ArrayBuffer | Uint8Array): string {
  const body = Buffer.from(der as ArrayBuffer).toString('base64').replace(/(.{64})/g, '$1\n').trimEnd()
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`
}

/**
 * A request built with @peculiar/x509: `subject` is its RDNs in order, each an object of attribute type
 * to values (`[{CN: ['a', 'b']}]` is one multi-valued RDN); a string is a PrintableString when it can
 * be, as Go writes it, or of the type given (`{bmpString: 'a'}`). Extensions and attributes are added as given.
 */
export async function peculiarCsr(options: {subject: x509.JsonNameParams; extensions?: x509.Extension[]; attributes?: x509.Attribute[]}): Promise<Crafted> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: new x509.Name(options.subject),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: options.extensions ?? [],
    attributes: options.attributes ?? [],
  })
  return {pem: request.toString('pem') + '\n', keyPem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey))}
}

/** The subject of a kind's poollet of this pool, CN then O, as ironpool's poollet writes it. */
export function poolletSubject(kind: PoolKind, pool: string): x509.JsonNameParams {
  return [{CN: [`${kind.poolletUserPrefix}${pool}`]}, {O: [kind.poolletGroup]}]
}

export const SAN = {
  dns: () => new x509.SubjectAlternativeNameExtension([{type: 'dns', value: 'p1.example.com'}]),
  ip: () => new x509.SubjectAlternativeNameExtension([{type: 'ip', value: '10.0.0.1'}]),
  email: () => new x509.SubjectAlternativeNameExtension([{type: 'email', value: 'p1@example.com'}]),
  uri: () => new x509.SubjectAlternativeNameExtension([{type: 'url', value: 'spiffe://cluster/p1'}]),
}

/**
 * A request made by openssl: `-subj` as given (e.g. `/CN=a/CN=b/O=c`), with `-multivalue-rdn` and `-addext` when asked;
 * its key an ECDSA P-256 one unless `key` gives genpkey's arguments (`['-algorithm', 'ED25519']`), signed with
 * openssl's default digest unless `digest` names one (`sha1`).
 */
export async function opensslCsr(subj: string, options: {multivalueRdn?: boolean; addext?: string[]; key?: string[]; digest?: string} = {}): Promise<Crafted> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ironpool-csr-'))
  try {
    const key = path.join(dir, 'key.pem')
    const csr = path.join(dir, 'csr.pem')
    await run('openssl', ['genpkey', ...(options.key ?? ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']), '-out', key])
    const extra = [...(options.multivalueRdn ? ['-multivalue-rdn'] : []), ...(options.addext ?? []).flatMap((e) => ['-addext', e]), ...(options.digest === undefined ? [] : [`-${options.digest}`])]
    await run('openssl', ['req', '-new', '-key', key, '-subj', subj, ...extra, '-out', csr])
    return {pem: await readFile(csr, 'utf8'), keyPem: await readFile(key, 'utf8')}
  } finally {
    await rm(dir, {recursive: true, force: true})
  }
}

/** genpkey's arguments for the keys of the crafted cases. */
export const KEYS = {
  rsa: (bits: number) => ['-algorithm', 'RSA', '-pkeyopt', `rsa_keygen_bits:${bits}`],
  ec: (curve: string) => ['-algorithm', 'EC', '-pkeyopt', `ec_paramgen_curve:${curve}`],
  ed25519: () => ['-algorithm', 'ED25519'],
}

/** The DER inside a PEM block. */
export function derOf(pemText: string): Buffer {
  return Buffer.from(pemText.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64')
}

export function csrPem(der: Uint8Array): string {
  return pem('CERTIFICATE REQUEST', der)
}

/** The same request with one byte of its signature changed: well-formed DER, a signature that does not verify. */
export function withBadSignature(crafted: Crafted): Crafted {
  const der = derOf(crafted.pem)
  der[der.length - 1] = (der[der.length - 1] ?? 0) ^ 0x01
  return {...crafted, pem: csrPem(der)}
}

/** The same request with two bytes after its DER (Go's parser refuses trailing data; a lenient one may not). */
export function withTrailingBytes(crafted: Crafted): Crafted {
  return {...crafted, pem: csrPem(Buffer.concat([derOf(crafted.pem), Buffer.from([0, 0])]))}
}

/** The same request with its outer length in a longer form than DER allows (BER). */
export function withLongFormLength(crafted: Crafted): Crafted {
  const der = derOf(crafted.pem)
  // 30 82 LL LL ... -> 30 83 00 LL LL ...
  if (der[1] !== 0x82) throw new Error('expected a two-byte length')
  return {...crafted, pem: csrPem(Buffer.concat([Buffer.from([0x30, 0x83, 0x00]), der.subarray(2)]))}
}

export const USAGES = [...POOLLET_CSR_USAGES]
