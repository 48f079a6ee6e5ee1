/**
 * Creates the bench's pools (Ready=True, as a poollet would have left them) and their Leases (held by
 * a bench identity, renewed now), as admin with bounded concurrency.
 */
import {CoordinationV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Lease} from '@kubernetes/client-node'
import {formatMicroTime, formatTime} from '../../src/core/conditions.ts'
import type {PoolKind} from '../../src/core/pool-kinds.ts'
import type {LeaseSpec} from '../../src/core/types.ts'
import {forEachLimit} from './limit.ts'

const CONCURRENCY = 16

export async function seedPools(kubeConfig: KubeConfig, kind: PoolKind, names: readonly string[]): Promise<void> {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi)
  const coordination = kubeConfig.makeApiClient(CoordinationV1Api)
  const {group, version, plural, leaseNamespace: namespace} = kind
  await forEachLimit(names, CONCURRENCY, async (name) => {
    await custom.createClusterCustomObject({group, version, plural, body: {apiVersion: `${group}/${version}`, kind: kind.kind, metadata: {name}, spec: {}}})
    const now = new Date()
    await setReady(custom, kind, name, now)
    // Strings with six fractional digits pass client-node's serialiser untouched (as in src/kube).
    const spec: LeaseSpec = {holderIdentity: `${name}_bench`, leaseDurationSeconds: 40, acquireTime: formatMicroTime(now), renewTime: formatMicroTime(now)}
    await coordination.createNamespacedLease({namespace, body: {metadata: {name, namespace}, spec: spec as V1Lease['spec']}})
  })
}

/** Sets the pool's Ready=True, as its poollet does when it comes back (a bench revives its dead pools so). */
async function setReady(custom: CustomObjectsApi, kind: PoolKind, name: string, now: Date): Promise<void> {
  const {group, version, plural} = kind
  const ready = {type: 'Ready', status: 'True', reason: 'HeartbeatReceived', message: kind.readyMessage, observedGeneration: 1, lastUpdateTime: formatTime(now), lastTransitionTime: formatTime(now)}
  await custom.patchClusterCustomObjectStatus({group, version, plural, name, body: {status: {conditions: [ready]}}}, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))
}

/** Sets these pools Ready=True again, with bounded concurrency. */
export async function reviveReady(kubeConfig: KubeConfig, kind: PoolKind, names: readonly string[]): Promise<void> {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi)
  await forEachLimit(names, CONCURRENCY, (name) => setReady(custom, kind, name, new Date()))
}
