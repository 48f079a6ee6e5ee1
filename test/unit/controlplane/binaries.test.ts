import {expect} from 'chai'
import {chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {BINARY_NAMES, cacheRoot, ensureBinaries, pinnedVersions} from '../../../src/controlplane/binaries.ts'

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

  describe('building with Go (a fake go on PATH that records what it builds)', () => {
    /** A `go` that answers `env GOVERSION` and `list -deps`, and for `build ... -o OUT PKG` writes OUT and logs PKG. */
    async function fakeGo(): Promise<{env: NodeJS.ProcessEnv; built: () => Promise<string[]>}> {
      const log = path.join(dir, 'go.log')
      const script = [
        '#!/bin/sh',
        'case "$1" in',
        '  env) echo go1.26.0 ;;',
        '  list) echo a; echo b; echo c ;;',
        '  build)',
        '    out=""; prev=""; for arg in "$@"; do [ "$prev" = "-o" ] && out="$arg"; prev="$arg"; pkg="$arg"; done',
        '    echo compiling-something >&2',
        `    echo "$pkg" >> ${JSON.stringify(log)}; printf '#!/bin/sh\n' > "$out"; chmod +x "$out" ;;`,
        'esac',
      ].join('\n')
      await mkdir(path.join(dir, 'bin'))
      await writeFile(path.join(dir, 'bin', 'go'), `${script}\n`, {mode: 0o755})
      return {
        env: {XDG_CACHE_HOME: path.join(dir, 'cache'), PATH: `${path.join(dir, 'bin')}:/usr/bin:/bin`},
        built: async () => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter((line) => line !== ''),
      }
    }

    it('builds only kube-apiserver, kubectl and etcd by default, and kube-controller-manager when asked, into the same folder', async () => {
      const go = await fakeGo()
      const lines: string[] = []
      const core = await ensureBinaries({env: go.env, progress: (line) => lines.push(line)})
      expect(await go.built()).to.deep.equal(['k8s.io/kubernetes/cmd/kube-apiserver', 'k8s.io/kubernetes/cmd/kubectl', 'go.etcd.io/etcd/server/v3'])
      expect(lines.join('\n')).to.include('[1/3] go build k8s.io/kubernetes/cmd/kube-apiserver -> kube-apiserver (3 packages)')
      const folder = path.dirname(core['kube-apiserver'])
      expect((await readdir(folder)).sort()).to.deep.equal(['VERSION', 'etcd', 'kube-apiserver', 'kubectl'])

      const again = await ensureBinaries({env: go.env})
      expect(again.source).to.include('cache')
      expect(await go.built()).to.have.length(3)

      const all = await ensureBinaries({env: go.env, names: BINARY_NAMES})
      expect(await go.built()).to.deep.equal([
        'k8s.io/kubernetes/cmd/kube-apiserver',
        'k8s.io/kubernetes/cmd/kubectl',
        'go.etcd.io/etcd/server/v3',
        'k8s.io/kubernetes/cmd/kube-controller-manager',
      ])
      expect(path.dirname(all['kube-controller-manager'])).to.equal(folder)
      expect((await readdir(path.dirname(folder))).sort(), 'no staging folder left beside it').to.deep.equal([path.basename(folder)])
    })

    it('uses a folder that holds all four (an earlier build) without building anything', async () => {
      const go = await fakeGo()
      const first = await ensureBinaries({env: go.env, names: BINARY_NAMES})
      await rm(path.join(dir, 'go.log'))
      const second = await ensureBinaries({env: go.env})
      expect(second.source).to.include('cache')
      expect(second['kube-controller-manager']).to.equal(first['kube-controller-manager'])
      expect(await go.built()).to.deep.equal([])
    })
  })
})
