/**
 * The X.509 work of a poollet's identity, on @peculiar/x509 and node:crypto: a new key and its PKCS#10
 * request, the times and subject of an issued certificate, and what the approver's rules read of a
 * request (src/core/poollet-csr.ts). ECDSA P-256, as IronCore's poollets generate.
 */
import 'reflect-metadata' // @peculiar/x509's dependency injection needs the Reflect polyfill loaded first
import * as x509 from '@peculiar/x509'
import {webcrypto} from 'node:crypto'
import type {CertificateTimes, CsrFacts, PoolletCsrTemplate} from '../../core/index.ts'

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

/** What IronCore's approval rules read of a CSR: the object's signer and usages and the request's subject and SANs. */
export function csrFacts(spec: {signerName: string; usages?: readonly string[]; requestPem: string}): CsrFacts {
  const request = new x509.Pkcs10CertificateRequest(spec.requestPem)
  const subject = new x509.Name(request.subject)
  const extension = request.getExtension(SAN_OID)
  const san = extension === null ? undefined : extension instanceof x509.SubjectAlternativeNameExtension ? extension : new x509.SubjectAlternativeNameExtension(extension.rawData)
  const names = san?.names.toJSON() ?? []
  const of = (type: x509.GeneralNameType) => names.filter((name) => name.type === type).map((name) => name.value)
  return {
    signerName: spec.signerName,
    usages: spec.usages ?? [],
    commonName: subjectValues(subject, 'CN')[0] ?? '',
    organizations: subjectValues(subject, 'O'),
    dnsNames: of('dns'),
    emailAddresses: of('email'),
    ipAddresses: of('ip'),
    uris: of('url'),
  }
}
