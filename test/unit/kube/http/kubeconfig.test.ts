import {HttpMethod, RequestContext} from '@kubernetes/client-node'
import {expect} from 'chai'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {renderKubeconfig} from '../../../../src/controlplane/kubeconfig.ts'
import {createCertificateAuthority} from '../../../../src/controlplane/pki.ts'
import {loadKubeConfig} from '../../../../src/kube/http/kubeconfig.ts'

describe('kubeconfig loading', () => {
  let dir: string
  let file: string

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ironpool-kc-'))
    const ca = await createCertificateAuthority()
    const user = await ca.issue({commonName: 'u', usage: 'client'})
    file = path.join(dir, 'kubeconfig')
    await writeFile(file, renderKubeconfig({server: 'https://127.0.0.1:6443', caPem: ca.certPem, user: 'u', credentials: {clientCertificatePem: user.certPem, clientKeyPem: user.keyPem}}))
  })
  after(async () => {
    await rm(dir, {recursive: true, force: true})
  })

  async function dispatcherOf(kc: ReturnType<typeof loadKubeConfig>): Promise<unknown> {
    const context = new RequestContext('https://127.0.0.1:6443/api', HttpMethod.GET)
    await kc.applySecurityAuthentication(context)
    return context.getDispatcher()
  }

  it('reuses one connection pool for every request of a KubeConfig (client-node makes one per request)', async () => {
    const kc = loadKubeConfig({kubeconfig: file})
    const first = await dispatcherOf(kc)
    expect(first).to.not.equal(undefined)
    expect(await dispatcherOf(kc)).to.equal(first)
  })

  it('names a --kubeconfig file that does not exist', () => {
    expect(() => loadKubeConfig({kubeconfig: path.join(dir, 'missing')})).to.throw(/does not exist/)
  })

  it('names a context the kubeconfig does not have', () => {
    expect(() => loadKubeConfig({kubeconfig: file, context: 'elsewhere'})).to.throw(/context elsewhere not found/)
  })
})
