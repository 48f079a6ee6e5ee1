/**
 * The control plane's certificates: one CA that signs the API server's serving certificate and every
 * client identity (admin, poollets, test users), the way a kubeadm cluster does. ECDSA P-256 keeps
 * key generation in milliseconds.
 */
import 'reflect-metadata' // @peculiar/x509's dependency injection needs the Reflect polyfill loaded first
import * as x509 from '@peculiar/x509'
import {randomBytes, webcrypto} from 'node:crypto'

x509.cryptoProvider.set(webcrypto)

const ALGORITHM = {name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256'}
/**
 * A year: a test identity must not look like one about to expire to ironpool's alerts (a poollet's
 * certificate warns under 7 days), unless a test asks for that with IssueRequest.validity.
 */
const VALIDITY_MS = 365 * 24 * 3600 * 1000

export interface KeyPairPem {
  certPem: string
  keyPem: string
}

export interface CertificateAuthority extends KeyPairPem {
  /** Issues a certificate signed by this CA. */
  issue(request: IssueRequest): Promise<KeyPairPem>
}

export interface IssueRequest {
  commonName: string
  /** Subject organisations: the Kubernetes groups of a client identity. */
  organizations?: readonly string[]
  usage: 'client' | 'server'
  /** Subject alternative names of a server certificate. */
  dnsNames?: readonly string[]
  ipAddresses?: readonly string[]
  /** Default: from a minute ago for a year. */
  validity?: {notBefore: Date; notAfter: Date}
}

type KeyPair = {publicKey: CryptoKey; privateKey: CryptoKey}

async function generateKeys(): Promise<KeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']))
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key))
  const body = der.toString('base64').replace(/(.{64})/g, '$1\n').trimEnd()
  return `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\n`
}

function serialNumber(): string {
  // Positive 64-bit serial: clear the top bit so DER does not read it as negative.
  const bytes = randomBytes(8)
  bytes[0] = (bytes[0] ?? 0) & 0x7f
  return bytes.toString('hex')
}

function validity(): {notBefore: Date; notAfter: Date} {
  // Back-date a minute so a certificate is valid at once even with a little clock difference.
  const now = Date.now()
  return {notBefore: new Date(now - 60_000), notAfter: new Date(now + VALIDITY_MS)}
}

export async function createCertificateAuthority(commonName = 'ironpool-test-ca'): Promise<CertificateAuthority> {
  const keys = await generateKeys()
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{CN: [commonName]}],
    ...validity(),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  })

  async function issue(request: IssueRequest): Promise<KeyPairPem> {
    const leafKeys = await generateKeys()
    const san: x509.JsonGeneralName[] = [
      ...(request.dnsNames ?? []).map((value) => ({type: 'dns' as const, value})),
      ...(request.ipAddresses ?? []).map((value) => ({type: 'ip' as const, value})),
    ]
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serialNumber(),
      subject: [{CN: [request.commonName]}, ...(request.organizations ?? []).map((o) => ({O: [o]}))],
      issuer: ca.subject,
      ...(request.validity ?? validity()),
      signingAlgorithm: ALGORITHM,
      publicKey: leafKeys.publicKey,
      signingKey: keys.privateKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension([
          request.usage === 'client' ? x509.ExtendedKeyUsage.clientAuth : x509.ExtendedKeyUsage.serverAuth,
        ]),
        ...(san.length > 0 ? [new x509.SubjectAlternativeNameExtension(san)] : []),
      ],
    })
    return {certPem: cert.toString('pem') + '\n', keyPem: await privateKeyPem(leafKeys.privateKey)}
  }

  return {certPem: ca.toString('pem') + '\n', keyPem: await privateKeyPem(keys.privateKey), issue}
}
