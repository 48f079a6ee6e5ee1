import {expect} from 'chai'
import {chmod, mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {cacheRoot, ensureBinaries, pinnedVersions} from '../../../src/controlplane/binaries.ts'

describe('control plane binaries', () => {
  let dir: string

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ironpool-bin-test-'))
  })
  afterEach(async () => {
    await rm(dir, {recursive: true, force: true})
  })

  it('reads the one pinned Kubernetes version, and the etcd it brings, from controlplane/go.mod', async () => {
    const versions = await pinnedVersions()
    expect(versions.kubernetes).to.match(/^v1\.3[4-7]\.\d+$/)
    expect(versions.etcd).to.match(/^v3\.[67]\.\d+$/)
  })

  it('uses KUBEBUILDER_ASSETS as is when it holds envtest\'s three binaries (kube-controller-manager is optional there)', async () => {
    for (const name of ['kube-apiserver', 'kubectl', 'etcd']) {
      await writeFile(path.join(dir, name), '#!/bin/sh\n')
      await chmod(path.join(dir, name), 0o755)
    }
    const binaries = await ensureBinaries({env: {KUBEBUILDER_ASSETS: dir}})
    expect(binaries['kube-apiserver']).to.equal(path.join(dir, 'kube-apiserver'))
    expect(binaries.etcd).to.equal(path.join(dir, 'etcd'))
    expect(binaries.source).to.include('KUBEBUILDER_ASSETS')
  })

  it('names what KUBEBUILDER_ASSETS lacks', async () => {
    await writeFile(path.join(dir, 'kubectl'), '')
    const error = await ensureBinaries({env: {KUBEBUILDER_ASSETS: dir}}).catch((e: unknown) => e)
    expect(error).to.be.an('error').with.property('message').that.includes('lacks kube-apiserver, etcd')
  })

  it('says what to install or set when neither Go nor assets nor a cache is there', async () => {
    const error = await ensureBinaries({env: {XDG_CACHE_HOME: dir, PATH: dir}}).catch((e: unknown) => e)
    expect(error).to.be.an('error')
    const message = (error as Error).message
    expect(message).to.include('Install Go 1.26 or newer').and.to.include('KUBEBUILDER_ASSETS')
  })

  it('keeps the cache outside the repository, under XDG_CACHE_HOME', () => {
    expect(cacheRoot({XDG_CACHE_HOME: '/x'})).to.equal('/x/ironpool/controlplane')
    expect(cacheRoot({})).to.match(/\.cache\/ironpool\/controlplane$/)
  })
})
