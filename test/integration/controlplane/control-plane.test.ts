import {ApiException, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions} from '@kubernetes/client-node'
import {expect} from 'chai'
import {spawn} from 'node:child_process'
import {existsSync} from 'node:fs'
import {createInterface} from 'node:readline'
import {fileURLToPath} from 'node:url'
import {pinnedVersions} from '../../../src/controlplane/binaries.ts'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {freePort} from '../../../src/controlplane/process.ts'
import net from 'node:net'
import {POOL_KIND_NAMES, POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {sharedControlPlane} from '../../support/control-plane.ts'
import {processGone, waitFor} from '../../support/wait.ts'

function customObjects(kubeconfig: string): CustomObjectsApi {
  const kc = new KubeConfig()
  kc.loadFromFile(kubeconfig)
  return kc.makeApiClient(CustomObjectsApi)
}

async function statusCode(promise: Promise<unknown>): Promise<number> {
  try {
    await promise
    return 200
  } catch (error) {
    if (error instanceof ApiException) return error.code
    throw error
  }
}

describe('control plane (real kube-apiserver and etcd)', function () {
  this.timeout(120_000)
  let plane: ControlPlane

  before(async () => {
    plane = await sharedControlPlane()
  })

  it('starts again with new ports when a port it chose is taken before etcd binds it', async () => {
    // The race of parallel workers, made certain: the first ports handed out are held by a listener.
    const taken = net.createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const takenPort = (taken.address() as net.AddressInfo).port
    const handedOut: number[] = []
    const lines: string[] = []
    let other: ControlPlane | undefined
    try {
      other = await ControlPlane.start({
        progress: (line) => lines.push(line),
        // etcd's client port first: the first port handed out is the taken one, every later one free.
        freePort: async () => {
          const port = handedOut.length === 0 ? takenPort : await freePort()
          handedOut.push(port)
          return port
        },
      })
      expect(new URL(other.server).port, 'kube-apiserver on a port of the second attempt').to.not.equal(String(takenPort))
      expect(handedOut.length, 'ports of two attempts').to.be.at.least(6)
      expect(lines.some((l) => l.includes('starting the control plane again'))).to.equal(true)
      expect((await other.version()).gitVersion).to.equal((await pinnedVersions()).kubernetes)
    } finally {
      await other?.stop()
      taken.close()
    }
  })

  it('serves the pinned Kubernetes version', async () => {
    const {gitVersion} = await plane.version()
    const pinned = await pinnedVersions()
    console.log(`      kube-apiserver ${gitVersion} at ${plane.server} (etcd ${pinned.etcd})`)
    expect(gitVersion).to.equal(pinned.kubernetes)
  })

  for (const name of POOL_KIND_NAMES) {
    const kind = POOL_KINDS[name]
    it(`creates a ${kind.kind} and merge-patches its status as admin`, async () => {
      const api = customObjects(plane.adminKubeconfig)
      const pool = `cp-admin-${name}`
      const base = {group: kind.group, version: kind.version, plural: kind.plural}
      await api.createClusterCustomObject({...base, body: {apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, metadata: {name: pool}, spec: {providerID: `test://${pool}`}}})
      const condition = {type: 'Ready', status: 'True', reason: 'HeartbeatReceived', message: kind.readyMessage, observedGeneration: 1, lastUpdateTime: '2026-01-01T00:00:00Z', lastTransitionTime: '2026-01-01T00:00:00Z'}
      await api.patchClusterCustomObjectStatus({...base, name: pool, body: {status: {conditions: [condition]}}}, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))
      const read = (await api.getClusterCustomObject({...base, name: pool})) as {status: {conditions: unknown[]}}
      expect(read.status.conditions).to.deep.equal([condition])
    })

    it(`rejects a ${kind.kind} status that violates the schema (a condition without reason and message, which IronCore requires)`, async () => {
      const api = customObjects(plane.adminKubeconfig)
      const pool = `cp-schema-${name}`
      const base = {group: kind.group, version: kind.version, plural: kind.plural}
      await api.createClusterCustomObject({...base, body: {apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, metadata: {name: pool}}})
      const patch = api.patchClusterCustomObjectStatus(
        {...base, name: pool, body: {status: {conditions: [{type: 'Ready', status: 'True'}]}}},
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )
      expect(await statusCode(patch)).to.equal(422)
    })
  }

  it('refuses a user in no group (403)', async () => {
    const nobody = await plane.userIdentity('nobody')
    const kind = POOL_KINDS.machine
    const list = customObjects(nobody.kubeconfig).listClusterCustomObject({group: kind.group, version: kind.version, plural: kind.plural})
    expect(await statusCode(list)).to.equal(403)
  })

  it('refuses a poollet identity what no RBAC grants it (403), authenticated as the poollet user in its group', async () => {
    // deploy/'s RBAC may or may not be applied to the shared control plane by other tests; nothing in
    // it lets a poollet delete or create pools, so these are refused either way.
    const kind = POOL_KINDS.machine
    const poollet = await plane.userIdentity(`${kind.poolletUserPrefix}p1`, [kind.poolletGroup])
    const api = customObjects(poollet.kubeconfig)
    const base = {group: kind.group, version: kind.version, plural: kind.plural}
    expect(await statusCode(api.deleteClusterCustomObject({...base, name: 'cp-admin-machine'}))).to.equal(403)
    expect(await statusCode(api.createClusterCustomObject({...base, body: {apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, metadata: {name: 'p1'}}}))).to.equal(403)
    const whoami = await plane.kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username} {.status.userInfo.groups}'], {kubeconfig: poollet.kubeconfig})
    expect(whoami).to.include(`${kind.poolletUserPrefix}p1`).and.to.include(kind.poolletGroup)
  })

  it('authenticates a ServiceAccount by a TokenRequest token', async () => {
    const sa = await plane.serviceAccountIdentity('ironpool-test', 'tester')
    const whoami = await plane.kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], {kubeconfig: sa.kubeconfig})
    expect(whoami).to.equal('system:serviceaccount:ironpool-test:tester')
  })

  it('shows READY and REASON columns in kubectl get machinepools', async () => {
    const out = await plane.kubectl(['get', 'machinepools', 'cp-admin-machine'])
    const [header, row] = out.trim().split('\n')
    expect(header).to.match(/^NAME\s+READY\s+REASON\s+AGE$/)
    expect(row).to.match(/^cp-admin-machine\s+True\s+HeartbeatReceived\s+\S+$/)
  })
})

describe('control plane lifecycle', function () {
  this.timeout(120_000)

  it('keeps its data across a kube-apiserver restart and an etcd restart, and leaves no process or folder behind', async () => {
    const plane = await ControlPlane.start()
    try {
      await plane.kubectlApply({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'survivor', namespace: 'default'}, data: {k: 'v'}})
      await plane.stopApiServer()
      expect(plane.apiServerRunning).to.be.false
      await plane.startApiServer()
      expect(await plane.kubectl(['get', 'configmap', 'survivor', '-o', 'jsonpath={.data.k}'])).to.equal('v')

      await plane.stopEtcd()
      expect(plane.etcdRunning).to.be.false
      await plane.startEtcd()
      const value = await waitFor('the API server to reach etcd again', async () =>
        (await plane.kubectl(['get', 'configmap', 'survivor', '-o', 'jsonpath={.data.k}'])) || undefined,
      )
      expect(value).to.equal('v')
    } finally {
      const pids = plane.pids
      const dir = plane.dir
      await plane.stop()
      expect(pids).to.have.length(2)
      for (const pid of pids) expect(processGone(pid), `process ${pid} still running`).to.be.true
      expect(existsSync(dir), `${dir} still exists`).to.be.false
    }
  })
})

describe('control plane reaper', function () {
  this.timeout(120_000)

  it('kills etcd and kube-apiserver and removes the folder when the harness dies by SIGKILL', async () => {
    const fixture = new URL('../../support/fixtures/control-plane-then-wait.ts', import.meta.url)
    const harness = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', fileURLToPath(fixture)], {stdio: ['ignore', 'pipe', 'inherit']})
    const lines = createInterface({input: harness.stdout})
    const first = await new Promise<string>((resolve, reject) => {
      lines.once('line', resolve)
      harness.once('exit', (code) => reject(new Error(`harness exited ${code} before starting`)))
    })
    const {pids, dir} = JSON.parse(first) as {pids: number[]; dir: string}
    expect(pids).to.have.length(2)
    for (const pid of pids) expect(processGone(pid)).to.be.false
    harness.kill('SIGKILL')
    await waitFor('etcd and kube-apiserver to be killed', () => pids.every(processGone), {timeoutMs: 20_000})
    await waitFor(`${dir} to be removed`, () => !existsSync(dir), {timeoutMs: 20_000})
  })
})
