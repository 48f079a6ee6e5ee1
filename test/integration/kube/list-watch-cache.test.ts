import {CoordinationV1Api, CustomObjectsApi, KubeConfig, V1MicroTime} from '@kubernetes/client-node'
import {expect} from 'chai'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {systemClock, type Clock} from '../../../src/core/clock.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {ListWatchCache, type CacheEvent, type KubeObject, type ListWatchCacheOptions} from '../../../src/kube/watch/list-watch-cache.ts'
import {customObjectSource, type ResourceRef, type SourceOptions} from '../../../src/kube/watch/list-watch-source.ts'
import {installCrds, sharedControlPlane} from '../../support/control-plane.ts'
import {compactEtcd} from '../../support/etcd-maintenance.ts'
import {FakeLogger} from '../../support/fake-logger.ts'
import {waitFor} from '../../support/wait.ts'

const KIND = POOL_KINDS.machine
const POOLS: ResourceRef = {group: KIND.group, version: KIND.version, plural: KIND.plural}
/** Short retries so that a restart is seen within the tests' deadlines. */
const FAST = {backoff: {initialMs: 50, maxMs: 500}}

function kubeConfig(plane: ControlPlane): KubeConfig {
  const kc = new KubeConfig()
  kc.loadFromFile(plane.adminKubeconfig)
  return kc
}

const HOUR_MS = 3_600_000

/**
 * The system clock, except that a timer of exactly `ms` waits for open() instead (a backoff delay the
 * test ends when the fault it outlasts is over); every other timer is real.
 */
function gatedTimers(ms: number): {clock: Clock; held(): number; open(): void} {
  const waiting = new Set<() => void>()
  let opened = false
  const clock: Clock = {
    ...systemClock,
    setTimer(delay, fn) {
      if (delay !== ms || opened) return systemClock.setTimer(delay, fn)
      waiting.add(fn)
      return () => waiting.delete(fn)
    },
  }
  return {
    clock,
    held: () => waiting.size,
    open() {
      opened = true
      for (const fn of [...waiting]) {
        waiting.delete(fn)
        fn()
      }
    },
  }
}

/** A running cache on a real API server, with what it told its handlers, observer and health listeners. */
class Running<T extends KubeObject> {
  readonly cache: ListWatchCache<T>
  readonly logger = new FakeLogger()
  readonly events: CacheEvent<T>[] = []
  readonly counted: string[] = []
  readonly health: boolean[] = []
  readonly done: Promise<void>
  private readonly controller = new AbortController()

  constructor(kc: KubeConfig, ref: ResourceRef, options: Partial<ListWatchCacheOptions<T>> & {source?: Partial<SourceOptions>} = {}) {
    const watchdogMs = options.watchdogMs ?? 120_000
    const source = customObjectSource<T>(kc, ref, {inactivityTimeoutMs: watchdogMs + 5_000, ...options.source})
    this.cache = new ListWatchCache<T>({
      resource: source.path,
      list: source.list,
      watch: source.watch,
      logger: this.logger,
      observer: {
        relist: (r) => this.counted.push(`relist:${r}`),
        watchRestart: (r) => this.counted.push(`restart:${r}`),
        event: (t) => this.counted.push(t),
      },
      ...FAST,
      ...options,
    })
    this.cache.onEvent((e) => this.events.push(e))
    this.cache.onHealth((whole) => this.health.push(whole))
    this.done = this.cache.start(this.controller.signal)
  }

  async stop(): Promise<void> {
    this.controller.abort()
    await this.done
  }
}

interface PoolObject extends KubeObject {
  metadata: {name: string; resourceVersion: string; labels?: Record<string, string>}
  spec?: {providerID?: string; taints?: {key: string; effect: string}[]}
}

function pools(plane: ControlPlane) {
  const api = kubeConfig(plane).makeApiClient(CustomObjectsApi)
  const base = {group: KIND.group, version: KIND.version, plural: KIND.plural}
  return {
    create: (name: string, label: string) =>
      api.createClusterCustomObject({...base, body: {apiVersion: `${KIND.group}/${KIND.version}`, kind: KIND.kind, metadata: {name, labels: {'lwc-test': label}}, spec: {providerID: `test://${name}`}}}) as Promise<PoolObject>,
    // providerID is immutable once set (as in IronCore): an update changes the taints instead.
    taint: (name: string, key: string) =>
      api.patchClusterCustomObject({...base, name, body: [{op: 'add', path: '/spec/taints', value: [{key, effect: 'NoSchedule'}]}]}) as Promise<PoolObject>,
    delete: (name: string) => api.deleteClusterCustomObject({...base, name}),
  }
}

describe('ListWatchCache on a real API server', function () {
  this.timeout(120_000)

  describe('ordinary cases (shared control plane)', () => {
    let plane: ControlPlane
    const running: Running<KubeObject>[] = []
    const start = <T extends KubeObject>(...args: ConstructorParameters<typeof Running<T>>) => {
      const r = new Running<T>(...args)
      running.push(r as unknown as Running<KubeObject>)
      return r
    }
    before(async () => {
      plane = await sharedControlPlane()
    })
    afterEach(async () => {
      await Promise.all(running.splice(0).map((r) => r.stop()))
    })

    it('lists the objects that exist before it starts, keyed by name, and is whole once watching', async () => {
      const api = pools(plane)
      await api.create('lwc-initial-1', 'initial')
      await api.create('lwc-initial-2', 'initial')
      const r = start<PoolObject>(kubeConfig(plane), {...POOLS, labelSelector: 'lwc-test=initial'})
      await r.cache.waitForSync(AbortSignal.timeout(10_000))
      expect(r.cache.isWhole()).to.be.true
      expect(r.cache.list().map((p) => p.metadata.name).sort()).to.deep.equal(['lwc-initial-1', 'lwc-initial-2'])
      expect(r.cache.get('lwc-initial-1')?.spec?.providerID).to.equal('test://lwc-initial-1')
      // The server sends managedFields (the create is recorded there); the cache keeps none.
      expect(r.cache.list().map((p) => 'managedFields' in p.metadata)).to.deep.equal([false, false])
      expect(r.events.map((e) => `${e.type} ${e.key}`).sort()).to.deep.equal(['upsert lwc-initial-1', 'upsert lwc-initial-2'])
    })

    it('sees a create, an update (with the old object) and a delete as events, and follows their resourceVersion', async () => {
      const api = pools(plane)
      const r = start<PoolObject>(kubeConfig(plane), {...POOLS, labelSelector: 'lwc-test=events'})
      await r.cache.waitForSync(AbortSignal.timeout(10_000))
      const created = await api.create('lwc-events', 'events')
      await waitFor('the create', () => r.events.length === 1)
      const updated = await api.taint('lwc-events', 'moved')
      await waitFor('the update', () => r.events.length === 2)
      expect(r.cache.resourceVersion).to.equal(updated.metadata.resourceVersion)
      await api.delete('lwc-events')
      await waitFor('the delete', () => r.events.length === 3)
      const [c, u, d] = r.events
      expect(c).to.deep.include({type: 'upsert', key: 'lwc-events'})
      expect(c?.object.metadata.resourceVersion).to.equal(created.metadata.resourceVersion)
      expect(u?.type === 'upsert' && u.old?.spec?.taints).to.equal(undefined)
      expect(u?.object.spec?.taints).to.deep.equal([{key: 'moved', effect: 'NoSchedule'}])
      expect((created.metadata as {managedFields?: unknown}).managedFields, 'the server records who wrote the pool').to.not.equal(undefined)
      expect('managedFields' in (u?.object.metadata ?? {}), 'a watched object keeps no managedFields').to.equal(false)
      expect(d).to.deep.include({type: 'delete', key: 'lwc-events'})
      expect(r.cache.size).to.equal(0)
    })

    it('keys namespaced objects (Leases) by namespace/name', async () => {
      await plane.kubectlApply({apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'lwc-leases'}})
      const coord = kubeConfig(plane).makeApiClient(CoordinationV1Api)
      await coord.createNamespacedLease({namespace: 'lwc-leases', body: {metadata: {name: 'p1'}, spec: {holderIdentity: 'p1', renewTime: new V1MicroTime()}}})
      const r = start<KubeObject>(kubeConfig(plane), {group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespace: 'lwc-leases'})
      await r.cache.waitForSync(AbortSignal.timeout(10_000))
      expect(r.cache.get('lwc-leases/p1')).to.not.be.undefined
    })

    it('a server watch timeout: a bookmark moves the resourceVersion, the clean close is reopened, and the cache stays whole', async () => {
      // timeoutSeconds: 4 makes the server send its pre-timeout bookmark after about two seconds and close.
      const r = start<PoolObject>(kubeConfig(plane), {...POOLS, labelSelector: 'lwc-test=bookmarks'}, {source: {timeoutSeconds: 4}})
      await r.cache.waitForSync(AbortSignal.timeout(10_000))
      const listed = r.cache.resourceVersion
      // Writes elsewhere move the etcd revision, so the bookmark carries a newer resourceVersion.
      await pools(plane).create('lwc-bookmark-other', 'other')
      await waitFor('a bookmark', () => r.counted.includes('bookmark'), {timeoutMs: 15_000})
      await waitFor('a clean close, reopened', () => r.counted.includes('restart:closed'), {timeoutMs: 15_000})
      expect(Number(r.cache.resourceVersion)).to.be.greaterThan(Number(listed))
      expect(r.health).to.deep.equal([true])
      expect(r.cache.isWhole()).to.be.true
    })

    it('a quiet watch outlives client-node\'s own 30 s inactivity abort (the cache\'s watchdog decides instead)', async function () {
      this.timeout(60_000)
      const r = start<PoolObject>(kubeConfig(plane), {...POOLS, labelSelector: 'lwc-test=quiet'})
      await r.cache.waitForSync(AbortSignal.timeout(10_000))
      // Observing an absence: nothing may happen for longer than client-node's default of 30 s. Should
      // a client-node upgrade stop honouring the inactivity override, this fails with 'restart:error'.
      await new Promise((resolve) => setTimeout(resolve, 35_000))
      expect(r.counted.filter((c) => c.startsWith('restart:'))).to.deep.equal([])
      expect(r.health).to.deep.equal([true])
    })

    it('stop() ends the watch: no event afterwards, start() resolves, not whole', async () => {
      const api = pools(plane)
      const r = start<PoolObject>(kubeConfig(plane), {...POOLS, labelSelector: 'lwc-test=stop'})
      await r.cache.waitForSync(AbortSignal.timeout(10_000))
      await r.stop()
      expect(r.cache.isWhole()).to.be.false
      const witness = start<PoolObject>(kubeConfig(plane), {...POOLS, labelSelector: 'lwc-test=stop'})
      await witness.cache.waitForSync(AbortSignal.timeout(10_000))
      await api.create('lwc-stop', 'stop')
      // The witness seeing the create is the moment the stopped cache would have seen it too.
      await waitFor('the witness to see the create', () => witness.events.length === 1)
      expect(r.events).to.deep.equal([])
      expect(r.counted.filter((c) => c.startsWith('restart:') || c.startsWith('relist:'))).to.deep.equal(['relist:initial'])
    })
  })

  describe('destructive cases (a private control plane)', () => {
    let plane: ControlPlane
    let r: Running<PoolObject> | undefined
    before(async () => {
      plane = await ControlPlane.start()
      await installCrds(plane)
    })
    afterEach(async () => {
      await r?.stop()
      r = undefined
    })
    after(async () => {
      await plane?.stop()
    })

    it('kube-apiserver stopped: not whole once the gap outlasts its tolerance, no crash; restarted: whole again and a delete made right after is seen', async () => {
      const api = pools(plane)
      await api.create('lwc-outage', 'outage')
      r = new Running<PoolObject>(kubeConfig(plane), {...POOLS, labelSelector: 'lwc-test=outage'}, {gapToleranceMs: 500})
      await r.cache.waitForSync(AbortSignal.timeout(10_000))
      await plane.stopApiServer()
      await waitFor('not whole', () => !r?.cache.isWhole(), {timeoutMs: 5_000})
      await plane.startApiServer()
      await api.delete('lwc-outage')
      await waitFor('the delete after the restart', () => r?.events.some((e) => e.type === 'delete' && e.key === 'lwc-outage'), {timeoutMs: 20_000})
      await waitFor('whole again', () => r?.cache.isWhole(), {timeoutMs: 20_000})
      expect(r.cache.size).to.equal(0)
      expect(r.logger.at('error')).to.deep.equal([])
    })

    it('410 Gone from a real server (etcd compacted past the watch while kube-apiserver was down) → relist', async () => {
      const api = pools(plane)
      await api.create('lwc-gone-1', 'gone')
      // The first retry waits until the server is back: the watch is reopened from the old
      // resourceVersion (with a short delay the failed reopen would relist, never seeing 410). That
      // first delay is the backoff's hour (the jitter seam draws 0 once, then 0.9999: 360 ms after),
      // held on a gate the test opens once kube-apiserver answers again, not waited out.
      let draws = 0
      const random = () => (draws++ === 0 ? 0 : 0.9999)
      const firstRetry = gatedTimers(HOUR_MS)
      r = new Running<PoolObject>(kubeConfig(plane), {...POOLS, labelSelector: 'lwc-test=gone'}, {backoff: {initialMs: HOUR_MS, maxMs: HOUR_MS, jitter: 1}, random, clock: firstRetry.clock})
      await r.cache.waitForSync(AbortSignal.timeout(10_000))
      await plane.stopApiServer()
      // Writes straight to etcd are impossible here; compacting its whole history is enough: the
      // restarted server's watch cache begins after the cache's resourceVersion.
      await compactEtcd(plane.etcdUrl)
      await plane.startApiServer()
      await api.create('lwc-gone-2', 'gone')
      await waitFor('the first retry waiting on its gate', () => firstRetry.held() === 1, {timeoutMs: 10_000})
      firstRetry.open()
      await waitFor('a relist after 410 Gone', () => r?.counted.includes('relist:gone'), {timeoutMs: 40_000})
      await waitFor('whole with both pools', () => r?.cache.isWhole() && r.cache.size === 2, {timeoutMs: 10_000})
      expect(r.counted.filter((c) => c.startsWith('restart:') || c.startsWith('relist:'))).to.deep.equal(['relist:initial', 'restart:error', 'restart:gone', 'relist:gone'])
    })
  })
})
