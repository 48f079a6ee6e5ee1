/**
 * x509.ts's certificate side, which only the integration tests reached before (`npm run mutation`
 * showed its mutants without coverage, issue 30): the secure metrics server's self-signed serving
 * certificate, and certificateInfo() as the poollet reads an issued certificate.
 */
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import {expect} from 'chai'
import {createPrivateKey, webcrypto} from 'node:crypto'
import {CertificationRequest} from '@peculiar/asn1-csr'
import {AsnConvert} from '@peculiar/asn1-schema'
import {Attribute} from '@peculiar/asn1-x509'
import {certificateInfo, generateCsr, readCsr, selfSignedServingCertificate} from '../../../../src/kube/identity/x509.ts'

x509.cryptoProvider.set(webcrypto)

const NOW = new Date('2026-03-01T12:00:00.000Z')
const YEAR_MS = 365 * 86_400_000

describe('x509: the self-signed serving certificate and certificateInfo', function () {
  this.timeout(10_000)

  it('serves the hosts as SANs (IP addresses as IPs, names as DNS), the first as CN, from a minute before now for a year; a leaf for serverAuth', async () => {
    const {certPem, keyPem} = await selfSignedServingCertificate(['metrics.example', 'localhost', '127.0.0.1', '::1', 'node-1', '10-0-0-1.nip.io'], NOW)
    expect(certPem.endsWith('-----END CERTIFICATE-----\n')).to.equal(true)
    const cert = new x509.X509Certificate(certPem)
    expect(cert.subject).to.equal('CN=metrics.example')
    expect(cert.notBefore.getTime()).to.equal(NOW.getTime() - 60_000)
    expect(cert.notAfter.getTime()).to.equal(NOW.getTime() + YEAR_MS)
    const san = cert.getExtension(x509.SubjectAlternativeNameExtension)
    expect(san?.names.toJSON().map((n) => `${n.type}:${n.value}`)).to.deep.equal(['dns:metrics.example', 'dns:localhost', 'ip:127.0.0.1', 'ip:::1', 'dns:node-1', 'dns:10-0-0-1.nip.io'])
    const basic = cert.getExtension(x509.BasicConstraintsExtension)
    expect([basic?.ca, basic?.critical]).to.deep.equal([false, true])
    const usage = cert.getExtension(x509.KeyUsagesExtension)
    expect([usage?.usages, usage?.critical]).to.deep.equal([x509.KeyUsageFlags.digitalSignature, true])
    expect(cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages).to.deep.equal([x509.ExtendedKeyUsage.serverAuth])
    expect(await cert.verify({signatureOnly: true}), 'self-signed by its own key').to.equal(true)
    expect(cert.serialNumber).to.match(/^[0-7][0-9a-f]{31}$/)
    // The key: PKCS#8 PEM, lines of 64, the certificate's own.
    expect(keyPem).to.match(/^-----BEGIN PRIVATE KEY-----\n([A-Za-z0-9+/=]{64}\n)*[A-Za-z0-9+/=]{1,64}\n-----END PRIVATE KEY-----\n$/)
    const key = createPrivateKey(keyPem)
    expect(key.asymmetricKeyType).to.equal('ec')
    expect(key.asymmetricKeyDetails?.namedCurve).to.equal('prime256v1')
  })

  it('names itself ironpool when given no host', async () => {
    const {certPem} = await selfSignedServingCertificate([], NOW)
    expect(new x509.X509Certificate(certPem).subject).to.equal('CN=ironpool')
  })

  it('certificateInfo: the validity in epoch milliseconds and the subject CN', async () => {
    const {certPem} = await selfSignedServingCertificate(['p1.example'], NOW)
    expect(certificateInfo(certPem)).to.deep.equal({times: {notBefore: NOW.getTime() - 60_000, notAfter: NOW.getTime() + YEAR_MS}, commonName: 'p1.example'})
  })

  it('certificateInfo: a certificate without a CN has commonName ""', async () => {
    const keys = await webcrypto.subtle.generateKey({name: 'ECDSA', namedCurve: 'P-256'}, true, ['sign', 'verify'])
    const cert = await x509.X509CertificateGenerator.createSelfSigned({serialNumber: '01', name: 'O=ironcore', notBefore: NOW, notAfter: new Date(NOW.getTime() + 1000), keys, signingAlgorithm: {name: 'ECDSA', hash: 'SHA-256'}})
    expect(certificateInfo(cert.toString('pem')).commonName).to.equal('')
  })

  it('generateCsr: a PEM request (closed by a newline) for the subject, and its PKCS#8 key', async () => {
    const {csrPem, keyPem} = await generateCsr({commonName: 'system:machinepoollet:p1', organization: 'system:machinepoollets'})
    expect(csrPem.endsWith('-----END CERTIFICATE REQUEST-----\n')).to.equal(true)
    const request = new x509.Pkcs10CertificateRequest(csrPem)
    expect(request.subject).to.equal('CN=system:machinepoollet:p1, O=system:machinepoollets')
    expect(await request.verify()).to.equal(true)
    expect(createPrivateKey(keyPem).asymmetricKeyType).to.equal('ec')
  })
})

describe('x509: readCsr on requests the CSR cases do not craft', function () {
  this.timeout(10_000)
  const SIGNER = 'kubernetes.io/kube-apiserver-client'
  const ALG = {name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256'}
  const pemOf = (der: ArrayBuffer | Uint8Array) => `-----BEGIN CERTIFICATE REQUEST-----\n${Buffer.from(der instanceof Uint8Array ? der : new Uint8Array(der)).toString('base64').replace(/(.{64})/g, '$1\n').trimEnd()}\n-----END CERTIFICATE REQUEST-----\n`
  async function request(extensions: x509.Extension[] = []): Promise<x509.Pkcs10CertificateRequest> {
    const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])
    return x509.Pkcs10CertificateRequestGenerator.create({name: 'CN=p1, O=g', keys, signingAlgorithm: ALG, extensions})
  }
  const read = (pem: string, usages?: readonly string[]) => readCsr({signerName: SIGNER, ...(usages === undefined ? {} : {usages}), request: Buffer.from(pem)})

  it('names every type of subject alternative name requested, once each, in order, and any other extension by name', async () => {
    const san = new x509.SubjectAlternativeNameExtension([
      {type: 'dns', value: 'a.example'},
      {type: 'ip', value: '10.0.0.1'},
      {type: 'email', value: 'a@example.com'},
      {type: 'url', value: 'https://a.example'},
      {type: 'upn', value: 'a@example'},
      {type: 'dn', value: 'CN=x'},
      {type: 'id', value: '1.2.3.4'},
      {type: 'dns', value: 'b.example'},
    ])
    const facts = await read((await request([san, new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature)])).toString('pem'))
    expect(facts.extensions).to.deep.equal(['subjectAltName (dns, ip, email, uri, otherName, directoryName, registeredID)', 'keyUsage'])
    expect(facts.signatureValid).to.equal(true)
  })

  it('what it cannot read is said, with nothing else read: no PEM, not canonical base64, no PKCS#10, not DER, not v1', async () => {
    const good = await request()
    const der = Buffer.from(good.rawData)
    const unread = (why: string) => ({signerName: SIGNER, usages: [], unreadable: why, subject: [], extensions: [], attributes: [], signatureValid: false, publicKey: {algorithm: 'unread'}, signatureAlgorithm: {name: 'unread'}})
    expect(await read('hello')).to.deep.equal(unread('spec.request is not exactly one PEM block of type CERTIFICATE REQUEST (no headers, nothing before or after)'))
    // The same bytes in base64 whose unused low bits are set: decodes alike, is not canonical.
    const body = Buffer.from([0xde, 0xad]).toString('base64') // "3q0="
    expect(await read(`-----BEGIN CERTIFICATE REQUEST-----\n${body.slice(0, 2)}1=\n-----END CERTIFICATE REQUEST-----\n`)).to.deep.equal(unread('the PEM block is not canonical base64'))
    const notCsr = await read(pemOf(Buffer.from([0x04, 0x02, 0x01, 0x02])))
    expect(notCsr.unreadable).to.match(/^the PEM block is no PKCS#10 certificate request: /)
    expect(await read(pemOf(Buffer.concat([der, Buffer.from([0])])), ['client auth'])).to.deep.equal({...unread('the request is not DER (another encoding, or bytes after it)'), usages: ['client auth']})
    const v2 = AsnConvert.parse(der, CertificationRequest)
    v2.certificationRequestInfo.version = 1
    expect((await read(pemOf(AsnConvert.serialize(v2)))).unreadable).to.equal("the request's version is 1, not v1 (0)")
  })

  it('an extension request that is empty, or that does not parse, is named as such', async () => {
    const csr = AsnConvert.parse(Buffer.from((await request()).rawData), CertificationRequest)
    csr.certificationRequestInfo.attributes.push(
      new Attribute({type: '1.2.840.113549.1.9.14', values: []}),
      new Attribute({type: '1.2.840.113549.1.9.14', values: [new Uint8Array([0x04, 0x01, 0x00]).buffer]}),
    )
    const facts = await read(pemOf(AsnConvert.serialize(csr)))
    expect(facts.extensions).to.deep.equal(['an empty extension request', 'an unparsable extension request'])
  })

  it('a subject alternative name extension whose value does not parse is named `unparsable`, not a crash', async () => {
    // ASN.1 NULL where the GeneralNames SEQUENCE belongs. (An ediPartyName, DER written by hand, reads
    // `unparsable` too: @peculiar's parser takes none, so the `other` name is unreached.)
    const facts = await read((await request([new x509.Extension('2.5.29.17', false, new Uint8Array([0x05, 0x00]))])).toString('pem'))
    expect(facts.extensions).to.deep.equal(['subjectAltName (unparsable)'])
  })

  it('a public key node:crypto cannot read is named by its algorithm OID, and its signature does not verify', async () => {
    const csr = AsnConvert.parse(Buffer.from((await request()).rawData), CertificationRequest)
    csr.certificationRequestInfo.subjectPKInfo.subjectPublicKey = new Uint8Array([0x04, 0x01, 0x02]).buffer
    const facts = await read(pemOf(AsnConvert.serialize(csr)))
    expect(facts.publicKey).to.deep.equal({algorithm: 'unreadable key (algorithm 1.2.840.10045.2.1)'})
    expect(facts.signatureValid).to.equal(false)
  })

  it('a request whose signature does not verify is read, with signatureValid false', async () => {
    const der = Buffer.from((await request()).rawData)
    der[der.length - 2] = (der[der.length - 2] ?? 0) ^ 0x01
    const facts = await read(pemOf(der))
    expect(facts.unreadable).to.equal(undefined)
    expect(facts.signatureValid).to.equal(false)
  })
})
