/**
 * Seeds objects by writing them into etcd under kube-apiserver's keys, as it stores them, instead of
 * creating them through it: 30,000 pools took 85 s through the API here (three requests each, bounded
 * by kube-apiserver's CPU on 2 cores) and take seconds this way (bench/README.md, issue 27).
 *
 * kube-apiserver stores custom resources as JSON and Leases as protobuf by default, and reads either
 * back whatever its --storage-media-type (its storage codec recognises both), so everything is
 * written as JSON. Its watch cache follows etcd and takes these writes as any other; each object's
 * resourceVersion is its etcd revision, set on read. What the API server would add on create is
 * written here: a uid, creationTimestamp, generation (pools), and managedFields in the shape it writes
 * them, so that lists and watch events are the size a real cluster serves.
 *
 * Only for a bench's own control plane (etcd on plain HTTP on loopback, its default /registry prefix):
 * nothing here is admitted or validated.
 */
import {randomUUID} from 'node:crypto'
import {formatTime} from '../../src/core/conditions.ts'
import type {PoolKind} from '../../src/core/pool-kinds.ts'
import {forEachLimit, pollUntil} from './limit.ts'
import {benchLeaseSpec, readyCondition} from './seed.ts'

/** etcd's default --max-txn-ops. */
const OPS_PER_TXN = 128
const TXNS_IN_FLIGHT = 8

const b64 = (text: string) => Buffer.from(text).toString('base64')

/** The managedFields entry kube-apiserver writes for an Update by the bench's client (manager "unknown"). */
function managed(apiVersion: string, fields: object, time: string, subresource?: string): object {
  return {apiVersion, fieldsType: 'FieldsV1', fieldsV1: fields, manager: 'unknown', operation: 'Update', ...(subresource === undefined ? {} : {subresource}), time}
}

/** The pool as the API server stores it once created and given Ready=True by seed.ts's requests. */
function storedPool(kind: PoolKind, name: string, now: Date): [string, object] {
  const apiVersion = `${kind.group}/${kind.version}`
  const time = formatTime(now)
  const managedFields = [managed(apiVersion, {'f:spec': {}}, time), managed(apiVersion, {'f:status': {'.': {}, 'f:conditions': {}}}, time, 'status')]
  const pool = {apiVersion, kind: kind.kind, metadata: {creationTimestamp: time, generation: 1, managedFields, name, uid: randomUUID()}, spec: {}, status: {conditions: [readyCondition(kind, now)]}}
  return [`/registry/${kind.group}/${kind.plural}/${name}`, pool]
}

/** The pool's Lease as the API server stores it once created by seed.ts's request. */
function storedLease(kind: PoolKind, name: string, now: Date): [string, object] {
  const namespace = kind.leaseNamespace
  const fields = {'f:spec': {'f:acquireTime': {}, 'f:holderIdentity': {}, 'f:leaseDurationSeconds': {}, 'f:renewTime': {}}}
  const metadata = {creationTimestamp: formatTime(now), managedFields: [managed('coordination.k8s.io/v1', fields, formatTime(now))], name, namespace, uid: randomUUID()}
  return [`/registry/leases/${namespace}/${name}`, {apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec: benchLeaseSpec(name, now)}]
}

async function put(etcdUrl: string, entries: readonly [string, object][]): Promise<void> {
  const batches: [string, object][][] = []
  for (let i = 0; i < entries.length; i += OPS_PER_TXN) batches.push(entries.slice(i, i + OPS_PER_TXN))
  await forEachLimit(batches, TXNS_IN_FLIGHT, async (batch) => {
    const success = batch.map(([key, object]) => ({requestPut: {key: b64(key), value: b64(JSON.stringify(object))}}))
    const response = await fetch(`${etcdUrl}/v3/kv/txn`, {method: 'POST', body: JSON.stringify({success}), signal: AbortSignal.timeout(30_000)})
    if (!response.ok) throw new Error(`etcd txn of ${batch.length} puts: HTTP ${response.status} ${await response.text()}`)
  })
}

/** An admin GET of the plane's API server (ControlPlane.request). */
type Get = (path: string) => Promise<{status: number; body: string}>

/**
 * Waits until kube-apiserver answers the list a controller starts with (consistent, unpaginated:
 * served from its watch cache) with `count` objects at `path`. After a burst of writes into etcd the
 * watch cache answers it 429 "storage is (re)initializing" for a few seconds (2 s after 10,000 pools
 * here) while a paginated list or one at resourceVersion=0 is already answered from etcd.
 */
async function waitUntilListed(get: Get, path: string, count: number): Promise<void> {
  let last = ''
  const listed = async () => {
    const answer = await get(path)
    if (answer.status !== 200) {
      last = `HTTP ${answer.status}: ${answer.body.slice(0, 200)}`
      return false
    }
    const listedCount = (JSON.parse(answer.body) as {items: unknown[]}).items.length
    last = `${listedCount} of ${count} listed`
    return listedCount === count
  }
  if (!(await pollUntil(listed, 60_000, 500))) throw new Error(`kube-apiserver does not list the objects written into etcd at ${path} after 60 s: ${last}`)
}

/** The same pools and Leases as seed.ts's seedPools, written into etcd; resolves once kube-apiserver lists them all. */
export async function seedPoolsInEtcd(plane: {etcdUrl: string; request: Get}, kind: PoolKind, names: readonly string[]): Promise<void> {
  const now = new Date()
  await put(plane.etcdUrl, names.flatMap((name) => [storedPool(kind, name, now), storedLease(kind, name, now)]))
  await waitUntilListed(plane.request.bind(plane), `/apis/${kind.group}/${kind.version}/${kind.plural}`, names.length)
  await waitUntilListed(plane.request.bind(plane), `/apis/coordination.k8s.io/v1/namespaces/${kind.leaseNamespace}/leases`, names.length)
}

/** Leases alone (no pools), held by the bench and renewed now; resolves once kube-apiserver lists them all. */
export async function seedLeasesInEtcd(plane: {etcdUrl: string; request: Get}, kind: PoolKind, names: readonly string[]): Promise<void> {
  const now = new Date()
  await put(plane.etcdUrl, names.map((name) => storedLease(kind, name, now)))
  await waitUntilListed(plane.request.bind(plane), `/apis/coordination.k8s.io/v1/namespaces/${kind.leaseNamespace}/leases`, names.length)
}
