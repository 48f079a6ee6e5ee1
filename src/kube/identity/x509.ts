/**
 * The X.509 work of a poollet's identity, on @peculiar/x509 and node:crypto: a new key and its PKCS#10
 * request, the times and subject of an issued certificate, and what the approver's rules read of a
 * request's DER (src/core/identity/poollet-csr.ts). ECDSA P-256, as IronCore's poollets generate.
 */
import 'reflect-metadata' // @peculiar/x509's dependency injection needs the Reflect polyfill loaded first
import {CertificationRequest} from '@peculiar/asn1-csr'
import {AsnConvert} from '@peculiar/asn1-schema'
import {Extensions, GeneralNames, type AttributeTypeAndValue, type Extension, type GeneralName} from '@peculiar/asn1-x509'
import * as x509 from '@peculiar/x509'
import {createPublicKey, webcrypto} from 'node:crypto'
import type {CertificateTimes, CsrFacts, PoolletCsrTemplate, SubjectAttribute} from '../../core/index.ts'

x509.cryptoProvider.set(webcrypto)

const SAN_OID = '2.5.29.17'
const ALGORITHM = {name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256'}

function pem(label: string, der: ArrayBuffer): string {
  const body = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').trimEnd()
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`
}

/** A fresh key and a certificate request for the template's subject, with no extensions (no SANs). */
export async function generateCsr(template: Pick<PoolletCsrTemplate, 'commonName' | 'organization'>): Promise<{csrPem: string; keyPem: string}> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{CN: [template.commonName]}, {O: [template.organization]}],
    keys,
    signingAlgorithm: ALGORITHM,
  })
  return {csrPem: request.toString('pem') + '\n', keyPem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey))}
}

function subjectValues(name: x509.Name, type: 'CN' | 'O'): string[] {
  return name.getField(type)
}

/** The validity of the first certificate in a PEM bundle, and its subject's CN. */
export function certificateInfo(certPem: string): {times: CertificateTimes; commonName: string} {
  const cert = new x509.X509Certificate(certPem)
  const subject = new x509.Name(cert.subject)
  return {times: {notBefore: cert.notBefore.getTime(), notAfter: cert.notAfter.getTime()}, commonName: subjectValues(subject, 'CN')[0] ?? ''}
}

const SUBJECT_TYPES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.5': 'serialNumber',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.9': 'street',
  '1.2.840.113549.1.9.1': 'emailAddress',
  '0.9.2342.19200300.100.1.25': 'DC',
  '0.9.2342.19200300.100.1.1': 'UID',
}
const EXTENSION_NAMES: Record<string, string> = {
  [SAN_OID]: 'subjectAltName',
  '2.5.29.15': 'keyUsage',
  '2.5.29.37': 'extKeyUsage',
  '2.5.29.19': 'basicConstraints',
  '2.5.29.14': 'subjectKeyIdentifier',
}
const EXTENSION_REQUEST_OID = '1.2.840.113549.1.9.14'
const ATTRIBUTE_NAMES: Record<string, string> = {'1.2.840.113549.1.9.7': 'challengePassword', '1.2.840.113549.1.9.2': 'unstructuredName'}
const STRING_FIELDS: Array<['printableString' | 'utf8String' | 'teletexString' | 'bmpString' | 'universalString' | 'ia5String', string]> = [
  ['printableString', 'PrintableString'],
  ['utf8String', 'UTF8String'],
  ['teletexString', 'TeletexString'],
  ['bmpString', 'BMPString'],
  ['universalString', 'UniversalString'],
  ['ia5String', 'IA5String'],
]
const PEM_BLOCK = /^-----BEGIN CERTIFICATE REQUEST-----\r?\n((?:[A-Za-z0-9+/=]+\r?\n)+)-----END CERTIFICATE REQUEST-----(?:\r?\n)?$/

function subjectAttribute(atv: AttributeTypeAndValue): SubjectAttribute {
  const type = SUBJECT_TYPES[atv.type] ?? atv.type
  for (const [field, stringType] of STRING_FIELDS) {
    const value = atv.value[field]
    if (typeof value === 'string') return {type, stringType, value}
  }
  return {type, stringType: 'other', value: ''}
}

function generalNameType(name: GeneralName): string {
  if (name.dNSName !== undefined) return 'dns'
  if (name.iPAddress !== undefined) return 'ip'
  if (name.rfc822Name !== undefined) return 'email'
  if (name.uniformResourceIdentifier !== undefined) return 'uri'
  if (name.otherName !== undefined) return 'otherName'
  if (name.directoryName !== undefined) return 'directoryName'
  if (name.registeredID !== undefined) return 'registeredID'
  return 'other'
}

function describeExtension(extension: Extension): string {
  const name = EXTENSION_NAMES[extension.extnID] ?? extension.extnID
  if (extension.extnID !== SAN_OID) return name
  try {
    const names = AsnConvert.parse(extension.extnValue.buffer, GeneralNames)
    return `${name} (${[...new Set(names.map(generalNameType))].join(', ')})`
  } catch {
    return `${name} (unparsable)`
  }
}

/** Signature algorithms by OID: the key algorithm and the hash (RFC 3279, 4055, 5758, 8410). */
const SIGNATURE_ALGORITHMS: Record<string, {name: string; hash?: string}> = {
  '1.2.840.10045.4.1': {name: 'ECDSA', hash: 'SHA-1'},
  '1.2.840.10045.4.3.1': {name: 'ECDSA', hash: 'SHA-224'},
  '1.2.840.10045.4.3.2': {name: 'ECDSA', hash: 'SHA-256'},
  '1.2.840.10045.4.3.3': {name: 'ECDSA', hash: 'SHA-384'},
  '1.2.840.10045.4.3.4': {name: 'ECDSA', hash: 'SHA-512'},
  '1.2.840.113549.1.1.4': {name: 'RSA', hash: 'MD5'},
  '1.2.840.113549.1.1.5': {name: 'RSA', hash: 'SHA-1'},
  '1.2.840.113549.1.1.14': {name: 'RSA', hash: 'SHA-224'},
  '1.2.840.113549.1.1.11': {name: 'RSA', hash: 'SHA-256'},
  '1.2.840.113549.1.1.12': {name: 'RSA', hash: 'SHA-384'},
  '1.2.840.113549.1.1.13': {name: 'RSA', hash: 'SHA-512'},
  '1.2.840.113549.1.1.10': {name: 'RSASSA-PSS'},
  '1.3.101.112': {name: 'Ed25519'},
  '1.3.101.113': {name: 'Ed448'},
  '1.2.840.10040.4.3': {name: 'DSA', hash: 'SHA-1'},
}
/** node:crypto's curve names, as the rules name them. */
const CURVES: Record<string, string> = {prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521', secp256k1: 'secp256k1'}
const KEY_TYPES: Record<string, string> = {ec: 'ECDSA', rsa: 'RSA', 'rsa-pss': 'RSASSA-PSS', ed25519: 'Ed25519', ed448: 'Ed448', dsa: 'DSA', dh: 'DH', x25519: 'X25519', x448: 'X448'}

/** The public key of a request's SubjectPublicKeyInfo (DER), as node:crypto reads it; an algorithm OID it does not know is named by that OID. */
function publicKeyOf(spki: ArrayBuffer, oid: string): CsrFacts['publicKey'] {
  try {
    const key = createPublicKey({key: Buffer.from(spki), format: 'der', type: 'spki'})
    const details = key.asymmetricKeyDetails ?? {}
    const algorithm = KEY_TYPES[key.asymmetricKeyType ?? ''] ?? String(key.asymmetricKeyType)
    return {algorithm, ...(details.namedCurve !== undefined && {curve: CURVES[details.namedCurve] ?? details.namedCurve}), ...(details.modulusLength !== undefined && {bits: details.modulusLength})}
  } catch {
    return {algorithm: `unreadable key (algorithm ${oid})`}
  }
}

function unreadable(signerName: string, usages: readonly string[], why: string): CsrFacts {
  return {signerName, usages, unreadable: why, subject: [], extensions: [], attributes: [], signatureValid: false, publicKey: {algorithm: 'unread'}, signatureAlgorithm: {name: 'unread'}}
}

/**
 * What the approval rules read of a CSR (src/core/identity/poollet-csr.ts): the object's signer and
 * usages, and its request read from the DER. spec.request must be exactly one PEM block of type
 * CERTIFICATE REQUEST (what Go's pem.Decode takes first is then the only thing there is) in canonical
 * base64, whose bytes are a PKCS#10 request (v1) that encodes back to the same bytes (DER, nothing after
 * it); the subject's RDNs and attributes are reported as encoded, with their string types, and the
 * extension requests and other attributes by name, so that the rules judge what the signer will read.
 */
export async function readCsr(spec: {signerName: string; usages?: readonly string[]; request: Uint8Array}): Promise<CsrFacts> {
  const usages = spec.usages ?? []
  const match = PEM_BLOCK.exec(Buffer.from(spec.request).toString('latin1'))
  if (match === null) return unreadable(spec.signerName, usages, 'spec.request is not exactly one PEM block of type CERTIFICATE REQUEST (no headers, nothing before or after)')
  const base64 = (match[1] ?? '').replace(/\r?\n/g, '')
  const der = Buffer.from(base64, 'base64')
  if (der.toString('base64') !== base64) return unreadable(spec.signerName, usages, 'the PEM block is not canonical base64')
  let request: CertificationRequest
  try {
    request = AsnConvert.parse(der, CertificationRequest)
  } catch (error) {
    return unreadable(spec.signerName, usages, `the PEM block is no PKCS#10 certificate request: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (!Buffer.from(AsnConvert.serialize(request)).equals(der)) return unreadable(spec.signerName, usages, 'the request is not DER (another encoding, or bytes after it)')
  const info = request.certificationRequestInfo
  if (info.version !== 0) return unreadable(spec.signerName, usages, `the request's version is ${info.version}, not v1 (0)`)
  const extensions: string[] = []
  const attributes: string[] = []
  for (const attribute of info.attributes ?? []) {
    if (attribute.type !== EXTENSION_REQUEST_OID) {
      attributes.push(ATTRIBUTE_NAMES[attribute.type] ?? attribute.type)
      continue
    }
    for (const value of attribute.values) {
      try {
        extensions.push(...AsnConvert.parse(value, Extensions).map(describeExtension))
      } catch {
        extensions.push('an unparsable extension request')
      }
    }
    if (attribute.values.length === 0) extensions.push('an empty extension request')
  }
  let signatureValid = false
  try {
    signatureValid = await new x509.Pkcs10CertificateRequest(der).verify()
  } catch {
    signatureValid = false
  }
  const signatureOid = request.signatureAlgorithm.algorithm
  return {
    signerName: spec.signerName,
    usages,
    subject: info.subject.map((rdn) => rdn.map(subjectAttribute)),
    extensions,
    attributes,
    signatureValid,
    publicKey: publicKeyOf(AsnConvert.serialize(info.subjectPKInfo), info.subjectPKInfo.algorithm.algorithm),
    signatureAlgorithm: SIGNATURE_ALGORITHMS[signatureOid] ?? {name: signatureOid},
  }
}

/**
 * A self-signed serving certificate and its key, as controller-runtime makes one when its secure metrics
 * server is given no certificate: ECDSA P-256, a year, for `hosts` (DNS names, or IP addresses) as SANs.
 * A scraper that knows no CA for it skips verification (the PodMonitor's insecureSkipVerify) and still
 * gets an encrypted connection and the bearer-token check; give --metrics-cert-dir a real one otherwise.
 */
export async function selfSignedServingCertificate(hosts: readonly string[], now: Date): Promise<{certPem: string; keyPem: string}> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])
  const names = hosts.map((host) => (/^[\d.]+$|:/.test(host) ? {type: 'ip' as const, value: host} : {type: 'dns' as const, value: host}))
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '1'),
    name: [{CN: [hosts[0] ?? 'ironpool']}],
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + 365 * 86_400_000),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
    ],
  })
  return {certPem: cert.toString('pem') + '\n', keyPem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey))}
}
