/**
 * How a refused CSR's SANs are named in its refusal (readCsr's extensions): each GeneralName type by
 * its name, and a SAN extension that does not parse as `unparsable`, never a crash. (An ediPartyName,
 * DER written by hand, reads `unparsable` too: @peculiar's parser takes none, so `other` is unreached.)
 */
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import {expect} from 'chai'
import {CLIENT_SIGNER} from '../../../../src/core/identity/poollet-csr.ts'
import {POOL_KINDS} from '../../../../src/core/pool-kinds.ts'
import {readCsr} from '../../../../src/kube/identity/x509.ts'
import {peculiarCsr, poolletSubject, USAGES} from '../../../support/csr-craft.ts'

const SAN_OID = '2.5.29.17'

async function sansOf(extension: x509.Extension): Promise<readonly string[]> {
  const crafted = await peculiarCsr({subject: poolletSubject(POOL_KINDS.machine, 'p1'), extensions: [extension]})
  return (await readCsr({signerName: CLIENT_SIGNER, usages: USAGES, request: Buffer.from(crafted.pem)})).extensions
}

describe('a CSR’s SANs as its refusal names them', function () {
  this.timeout(30_000)

  it('names each GeneralName type @peculiar/x509 writes', async () => {
    const san = new x509.SubjectAlternativeNameExtension([
      {type: 'dns', value: 'a.example'},
      {type: 'ip', value: '192.0.2.1'},
      {type: 'email', value: 'a@example.org'},
      {type: 'url', value: 'https://a.example'},
      {type: 'upn', value: 'a@example.org'},
      {type: 'dn', value: 'CN=a'},
      {type: 'id', value: '1.2.3.4'},
    ])
    expect(await sansOf(san)).to.deep.equal(['subjectAltName (dns, ip, email, uri, otherName, directoryName, registeredID)'])
  })

  it('names a SAN extension whose value does not parse `unparsable`', async () => {
    // ASN.1 NULL where the GeneralNames SEQUENCE belongs.
    expect(await sansOf(new x509.Extension(SAN_OID, false, new Uint8Array([0x05, 0x00])))).to.deep.equal(['subjectAltName (unparsable)'])
  })
})
