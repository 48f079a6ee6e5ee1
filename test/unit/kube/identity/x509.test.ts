/**
 * x509.ts's certificate side, which only the integration tests reached before (`npm run mutation`
 * showed its mutants without coverage, issue 30): the secure metrics server's self-signed serving
 * certificate, and certificateInfo() as the poollet reads an issued certificate.
 */
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import {expect} from 'chai'
import {createPrivateKey, webcrypto} from 'node:crypto'
import {certificateInfo, generateCsr, selfSignedServingCertificate} from '../../../../src/kube/identity/x509.ts'

x509.cryptoProvider.set(webcrypto)

const NOW = new Date('2026-03-01T12:00:00.000Z')
const YEAR_MS = 365 * 86_400_000

describe('x509: the self-signed serving certificate and certificateInfo', function () {
  this.timeout(10_000)

  it('serves the hosts as SANs (IP addresses as IPs, names as DNS), the first as CN, from a minute before now for a year; a leaf for serverAuth', async () => {
    const {certPem, keyPem} = await selfSignedServingCertificate(['metrics.example', 'localhost', '127.0.0.1', '::1'], NOW)
    expect(certPem.endsWith('-----END CERTIFICATE-----\n')).to.equal(true)
    const cert = new x509.X509Certificate(certPem)
    expect(cert.subject).to.equal('CN=metrics.example')
    expect(cert.notBefore.getTime()).to.equal(NOW.getTime() - 60_000)
    expect(cert.notAfter.getTime()).to.equal(NOW.getTime() + YEAR_MS)
    const san = cert.getExtension(x509.SubjectAlternativeNameExtension)
    expect(san?.names.toJSON().map((n) => `${n.type}:${n.value}`)).to.deep.equal(['dns:metrics.example', 'dns:localhost', 'ip:127.0.0.1', 'ip:::1'])
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
