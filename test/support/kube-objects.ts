/** Admin-side helpers for integration tests: create and read pools and Leases on the real API server. */
import {CoordinationV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions, type V1Lease} from '@kubernetes/client-node'
import type {PoolKind} from '../../src/core/pool-kinds.ts'
import type {Pool, PoolCondition} from '../../src/core/types.ts'

export class KubeObjects {
  private readonly custom: CustomObjectsApi
  private readonly coordination: CoordinationV1Api

  constructor(kubeconfig: string) {
    const kc = new KubeConfig()
    kc.loadFromFile(kubeconfig)
    this.custom = kc.makeApiClient(CustomObjectsApi)
    this.coordination = kc.makeApiClient(CoordinationV1Api)
  }

  private base(kind: PoolKind) {
    return {group: kind.group, version: kind.version, plural: kind.plural}
  }

  async createPool(kind: PoolKind, name: string, spec: object = {}): Promise<Pool> {
    const body = {apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, metadata: {name}, spec}
    return (await this.custom.createClusterCustomObject({...this.base(kind), body})) as Pool
  }

  async getPool(kind: PoolKind, name: string): Promise<Pool> {
    return (await this.custom.getClusterCustomObject({...this.base(kind), name})) as Pool
  }

  async deletePool(kind: PoolKind, name: string): Promise<void> {
    await this.custom.deleteClusterCustomObject({...this.base(kind), name})
  }

  /** Merge-patches the pool (spec or metadata); a spec change bumps metadata.generation. */
  async patchPool(kind: PoolKind, name: string, body: object): Promise<Pool> {
    return (await this.custom.patchClusterCustomObject({...this.base(kind), name, body}, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))) as Pool
  }

  async setConditions(kind: PoolKind, name: string, conditions: PoolCondition[]): Promise<Pool> {
    return this.patchStatus(kind, name, {conditions})
  }

  /** Merge-patches the pool's status (a list such as conditions is replaced whole). */
  async patchStatus(kind: PoolKind, name: string, status: object): Promise<Pool> {
    return (await this.custom.patchClusterCustomObjectStatus(
      {...this.base(kind), name, body: {status}},
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as Pool
  }

  async getLease(kind: PoolKind, name: string): Promise<V1Lease | undefined> {
    try {
      return await this.coordination.readNamespacedLease({name, namespace: kind.leaseNamespace})
    } catch {
      return undefined
    }
  }

  /** Creates or renews the Lease with this renewTime (a MicroTime string), holder `<pool>_stand-in`. */
  async renewLease(kind: PoolKind, name: string, renewTime: string): Promise<void> {
    const existing = await this.getLease(kind, name)
    const spec = {holderIdentity: `${name}_stand-in`, leaseDurationSeconds: 40, renewTime} as unknown as V1Lease['spec']
    if (existing === undefined) await this.createLease(kind, name, spec)
    else await this.coordination.replaceNamespacedLease({name, namespace: kind.leaseNamespace, body: {...existing, spec: {...existing.spec, ...spec}}})
  }

  /** Merge-patches the Lease's spec without a resourceVersion, as IronCore's machinepoollet writes it. */
  async patchLease(kind: PoolKind, name: string, spec: Record<string, unknown>): Promise<V1Lease> {
    return this.coordination.patchNamespacedLease({name, namespace: kind.leaseNamespace, body: {spec}}, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))
  }

  /** Merge-patches the whole Lease (metadata too), without a resourceVersion. */
  async mergePatchLease(kind: PoolKind, name: string, body: object): Promise<V1Lease> {
    return this.coordination.patchNamespacedLease({name, namespace: kind.leaseNamespace, body}, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))
  }

  async deleteLease(kind: PoolKind, name: string): Promise<void> {
    await this.coordination.deleteNamespacedLease({name, namespace: kind.leaseNamespace})
  }

  async createLease(kind: PoolKind, name: string, spec: V1Lease['spec']): Promise<V1Lease> {
    return this.coordination.createNamespacedLease({namespace: kind.leaseNamespace, body: {metadata: {name, namespace: kind.leaseNamespace}, spec}})
  }
}

export function readyOf(pool: Pool): PoolCondition | undefined {
  return pool.status?.conditions?.find((c) => c.type === 'Ready')
}
