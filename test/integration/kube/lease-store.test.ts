/**
 * The Lease store on a real kube-apiserver keeps what it does not own: a Lease with labels,
 * annotations, an ownerReference to its pool, a finalizer and the spec fields of coordinated leader
 * election keeps them all through a take-over and several renewals by the poollet's renewer, and
 * through the leader-election records; only the holder's five spec fields change.
 */
import {CoordinationV1Api, KubeConfig, type V1Lease} from '@kubernetes/client-node'
import {expect} from 'chai'
import {systemClock} from '../../../src/core/clock.ts'
import {ConflictError} from '../../../src/core/errors.ts'
import {renewedLease, releasedLease, takenOverLease} from '../../../src/core/leader/leader-record.ts'
import {LeaseRenewer} from '../../../src/core/heartbeat/lease-renewer.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {createLeaseStore} from '../../../src/kube/stores/lease-store.ts'
import type {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {sharedControlPlane} from '../../support/control-plane.ts'
import {FakeLogger} from '../../support/fake-logger.ts'
import {KubeObjects} from '../../support/kube-objects.ts'

const kind = POOL_KINDS.machine
const FINALIZER = 'ironpool.test/keep'

describe('Lease store: renewals keep every field the holder does not own (kube-apiserver)', function () {
  this.timeout(60_000)
  let plane: ControlPlane
  let objects: KubeObjects
  let coordination: CoordinationV1Api
  let kc: KubeConfig

  before(async () => {
    plane = await sharedControlPlane()
    await plane.kubectl(['create', 'namespace', kind.leaseNamespace]).catch(() => undefined)
    objects = new KubeObjects(plane.adminKubeconfig)
    kc = new KubeConfig()
    kc.loadFromFile(plane.adminKubeconfig)
    coordination = kc.makeApiClient(CoordinationV1Api)
  })

  async function foreignLease(name: string): Promise<V1Lease> {
    const pool = await objects.createPool(kind, name, {providerID: `test://${name}`})
    return coordination.createNamespacedLease({
      namespace: kind.leaseNamespace,
      body: {
        metadata: {
          name,
          namespace: kind.leaseNamespace,
          labels: {'ironpool.test/team': 'storage'},
          annotations: {'ironpool.test/note': 'written by another tool'},
          ownerReferences: [{apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, name, uid: pool.metadata.uid ?? ''}],
          finalizers: [FINALIZER],
        },
        spec: {holderIdentity: `${name}_previous`, leaseDurationSeconds: 40, renewTime: '2026-12-01T09:00:00.000000Z' as unknown as Date, leaseTransitions: 3},
      },
    })
  }

  async function cleanUp(name: string): Promise<void> {
    await coordination.patchNamespacedLease(
      {name, namespace: kind.leaseNamespace, body: [{op: 'remove', path: '/metadata/finalizers'}]},
    ).catch(() => undefined)
    await coordination.deleteNamespacedLease({name, namespace: kind.leaseNamespace}).catch(() => undefined)
    await objects.deletePool(kind, name).catch(() => undefined)
  }

  /** What a holder must not change: everything but the five holder fields and the server's bookkeeping. */
  function notOwned(lease: V1Lease): object {
    const {labels, annotations, ownerReferences, finalizers, uid, creationTimestamp} = lease.metadata ?? {}
    const {preferredHolder, strategy} = lease.spec ?? {}
    return {labels, annotations, ownerReferences, finalizers, uid, creationTimestamp, preferredHolder, strategy}
  }

  it("the poollet's renewer takes over and renews three times; labels, annotations, ownerReference and finalizer stay", async () => {
    const name = 'keeps-fields'
    const created = await foreignLease(name)
    try {
      const store = createLeaseStore(kc, kind.leaseNamespace, {requestTimeoutMs: 10_000})
      const renewer = new LeaseRenewer({store, clock: systemClock, logger: new FakeLogger(), name, namespace: kind.leaseNamespace, holderIdentity: `${name}_me`, leaseDurationSeconds: 20})
      const outcomes: string[] = []
      for (let i = 0; i < 4; i++) outcomes.push((await renewer.renew()).outcome)
      expect(outcomes).to.deep.equal(['took-over', 'renewed', 'renewed', 'renewed'])
      const after = await coordination.readNamespacedLease({name, namespace: kind.leaseNamespace})
      expect(notOwned(after)).to.deep.equal(notOwned(created))
      expect(after.metadata?.finalizers).to.deep.equal([FINALIZER])
      expect(after.metadata?.ownerReferences?.[0]?.name).to.equal(name)
      expect(after.spec?.holderIdentity).to.equal(`${name}_me`)
      expect(after.spec?.leaseDurationSeconds).to.equal(20)
      expect(after.spec?.leaseTransitions).to.equal(4)
    } finally {
      await cleanUp(name)
    }
  })

  it('the leader-election records (take over, renew, release) change only the holder fields', async () => {
    const name = 'keeps-fields-leader'
    const created = await foreignLease(name)
    try {
      const store = createLeaseStore(kc, kind.leaseNamespace)
      const context = {identity: 'controller-a', leaseDurationMs: 15_000, now: Date.now()}
      let lease = await store.get(name)
      expect(lease).to.not.equal(undefined)
      lease = await store.update(takenOverLease(lease!, context))
      lease = await store.update(renewedLease(lease, {...context, now: Date.now()}))
      lease = await store.update(releasedLease(lease, Date.now()))
      const after = await coordination.readNamespacedLease({name, namespace: kind.leaseNamespace})
      expect(notOwned(after)).to.deep.equal(notOwned(created))
      expect(after.spec?.holderIdentity).to.equal(undefined)
      expect(after.spec?.leaseDurationSeconds).to.equal(1)
    } finally {
      await cleanUp(name)
    }
  })

  it('still refuses a write from a stale resourceVersion with a ConflictError', async () => {
    const name = 'keeps-fields-conflict'
    await foreignLease(name)
    try {
      const store = createLeaseStore(kc, kind.leaseNamespace)
      const stale = (await store.get(name))!
      await store.update({...stale, spec: {...stale.spec, renewTime: '2026-12-01T09:00:01.000000Z'}})
      let error: unknown
      try {
        await store.update({...stale, spec: {...stale.spec, renewTime: '2026-12-01T09:00:02.000000Z'}})
      } catch (caught) {
        error = caught
      }
      expect(error).to.be.instanceOf(ConflictError)
    } finally {
      await cleanUp(name)
    }
  })
})
