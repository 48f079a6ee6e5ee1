/**
 * Creates the bench's pools (Ready=True, as a poollet would have left them) and their Leases (held by
 * a bench identity, renewed now), as admin over keep-alive connections with bounded concurrency.
 *
 * Over client-node (2.0.1 builds a new undici Agent, so a TLS handshake, for every request) 10,000
 * pools took about 3 minutes to seed here (55 pools a second, three requests each); over
 * keepalive-api.ts's pooled connections the same requests cost the API server and the bench a
 * fraction of that (bench/README.md, issue 27).
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {formatMicroTime, formatTime} from '../../src/core/conditions.ts'
import type {PoolKind} from '../../src/core/pool-kinds.ts'
import type {LeaseSpec} from '../../src/core/types.ts'
import {KeepAliveApi} from './keepalive-api.ts'
import {forEachLimit} from './limit.ts'

/** Requests in flight: kube-apiserver's default --max-requests-inflight is 400, APF's admin level more. */
const CONCURRENCY = 32
const JSON_TYPE = 'application/json'
const MERGE_PATCH = 'application/merge-patch+json'

export async function seedPools(kubeConfig: KubeConfig, kind: PoolKind, names: readonly string[]): Promise<void> {
  const api = new KeepAliveApi(kubeConfig, CONCURRENCY)
  const {group, version, plural, leaseNamespace: namespace} = kind
  try {
    await forEachLimit(names, CONCURRENCY, async (name) => {
      await api.request('POST', `/apis/${group}/${version}/${plural}`, {apiVersion: `${group}/${version}`, kind: kind.kind, metadata: {name}, spec: {}}, JSON_TYPE)
      const now = new Date()
      await setReady(api, kind, name, now)
      await api.request('POST', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`, {apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: {name, namespace}, spec: benchLeaseSpec(name, now)}, JSON_TYPE)
    })
  } finally {
    api.close()
  }
}

/** The Lease a bench's pool holds, renewed at `now`. */
export function benchLeaseSpec(name: string, now: Date): LeaseSpec {
  return {holderIdentity: `${name}_bench`, leaseDurationSeconds: 40, acquireTime: formatMicroTime(now), renewTime: formatMicroTime(now)}
}

/** Ready=True as the pool's poollet writes it. */
export function readyCondition(kind: PoolKind, now: Date): object {
  return {type: 'Ready', status: 'True', reason: 'HeartbeatReceived', message: kind.readyMessage, observedGeneration: 1, lastUpdateTime: formatTime(now), lastTransitionTime: formatTime(now)}
}

/** Sets the pool's Ready=True, as its poollet does when it comes back (a bench revives its dead pools so). */
async function setReady(api: KeepAliveApi, kind: PoolKind, name: string, now: Date): Promise<void> {
  const {group, version, plural} = kind
  await api.request('PATCH', `/apis/${group}/${version}/${plural}/${encodeURIComponent(name)}/status`, {status: {conditions: [readyCondition(kind, now)]}}, MERGE_PATCH)
}

/** Sets these pools Ready=True again, with bounded concurrency. */
export async function reviveReady(kubeConfig: KubeConfig, kind: PoolKind, names: readonly string[]): Promise<void> {
  const api = new KeepAliveApi(kubeConfig, CONCURRENCY)
  try {
    await forEachLimit(names, CONCURRENCY, (name) => setReady(api, kind, name, new Date()))
  } finally {
    api.close()
  }
}
