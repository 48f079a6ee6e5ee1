import {HttpMethod, RequestContext} from '@kubernetes/client-node'
import {expect} from 'chai'
import {mkdtemp, readdir, readFile, rm, stat} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {judgePoolletCsr, poolletCsrTemplate} from '../../../../src/core/index.ts'
import {POOL_KINDS} from '../../../../src/core/pool-kinds.ts'
import {renderKubeconfig} from '../../../../src/controlplane/kubeconfig.ts'
import {createCertificateAuthority} from '../../../../src/controlplane/pki.ts'
import {clientCertificatePem, kubeConfigFromString, switchIdentity} from '../../../../src/kube/identity/issued-kubeconfig.ts'
import {reuseConnections} from '../../../../src/kube/http/kubeconfig.ts'
import {fileKubeconfigStore} from '../../../../src/kube/identity/kubeconfig-store.ts'
import {generateCsr, readCsr} from '../../../../src/kube/identity/x509.ts'

describe("a poollet's CSR and kubeconfig file", () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ironpool-identity-unit-'))
  })
  afterEach(async () => {
    await rm(dir, {recursive: true, force: true})
  })

  it('generates a request that IronCore’s rules recognise for its kind and pool: subject CN and O only, no SANs', async () => {
    for (const kind of [POOL_KINDS.machine, POOL_KINDS.volume]) {
      const template = poolletCsrTemplate(kind, 'p1')
      const {csrPem, keyPem} = await generateCsr(template)
      expect(keyPem).to.match(/^-----BEGIN PRIVATE KEY-----\n/)
      const facts = await readCsr({signerName: template.signerName, usages: template.usages, request: Buffer.from(csrPem)})
      expect(facts).to.deep.include({
        subject: [[{type: 'CN', stringType: 'PrintableString', value: template.commonName}], [{type: 'O', stringType: 'PrintableString', value: template.organization}]],
        extensions: [],
        attributes: [],
        signatureValid: true,
        publicKey: {algorithm: 'ECDSA', curve: 'P-256'},
        signatureAlgorithm: {name: 'ECDSA', hash: 'SHA-256'},
      })
      expect(judgePoolletCsr(facts, {username: 'system:bootstrap:abc123', groups: [kind.bootstrapperGroup]})).to.deep.include({verdict: 'recognised', pool: 'p1', subresource: kind.csrSubresource})
    }
  })

  it('writes the kubeconfig file with mode 0600, creating its folder, replacing it whole, leaving no temporary file', async () => {
    const file = path.join(dir, 'state', 'kubeconfig')
    const store = fileKubeconfigStore(file)
    expect(await store.load()).to.equal(undefined)
    await store.save('first')
    await store.save('second')
    expect(await readFile(file, 'utf8')).to.equal('second')
    expect((await stat(file)).mode & 0o777).to.equal(0o600)
    expect(await readdir(path.dirname(file))).to.deep.equal(['kubeconfig'])
  })

  it('switches a live KubeConfig to a new certificate in place: the next request presents it, on a new connection pool', async () => {
    const ca = await createCertificateAuthority()
    const render = async () => {
      const cert = await ca.issue({commonName: 'compute.ironcore.dev:system:machinepool:p1', usage: 'client'})
      return {pem: cert.certPem, text: renderKubeconfig({server: 'https://127.0.0.1:6443', caPem: ca.certPem, user: 'p1', credentials: {clientCertificatePem: cert.certPem, clientKeyPem: cert.keyPem}})}
    }
    const [first, second] = [await render(), await render()]
    const live = kubeConfigFromString(first.text)
    reuseConnections(live)
    const dispatcher = async () => {
      const context = new RequestContext('https://127.0.0.1:6443/api', HttpMethod.GET)
      await live.applySecurityAuthentication(context)
      return context.getDispatcher()
    }
    const before = await dispatcher()
    switchIdentity(live, kubeConfigFromString(second.text))
    expect(clientCertificatePem(live)).to.equal(second.pem)
    const after = await dispatcher()
    expect(after).to.not.equal(before)
    expect(await dispatcher(), 'shared again from then on').to.equal(after)
    // The old identity's pool is closed (gracefully): a rotation leaves no pool behind.
    expect((before as {closed?: boolean}).closed, 'the old pool closed').to.equal(true)
    expect((after as {closed?: boolean}).closed).to.equal(false)
  })
})
