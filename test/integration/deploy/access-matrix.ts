/**
 * The access matrix's columns: one real request each, made with an identity's kubeconfig, and how its
 * answer is classified. Refusals are told apart by who refused: RBAC ("cannot <verb>") or the poollet
 * admission policy (its name in the message).
 */
import {
  ApiException,
  AuthorizationV1Api,
  CertificatesV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Event,
  type V1Lease,
} from '@kubernetes/client-node'
import {CLIENT_SIGNER, CSR_API_GROUP, poolletCsrTemplate, POOLLET_CSR_USAGES} from '../../../src/core/identity/poollet-csr.ts'
import {POOL_KINDS, type PoolKind} from '../../../src/core/pool-kinds.ts'
import {generateCsr} from '../../../src/kube/identity/x509.ts'
import {CONTROLLER_NAMESPACE, LEADER_ELECTION_ID, POOLLET_POLICY} from '../../../src/deploy/names.ts'

export type Outcome = 'ok' | 'RBAC' | 'policy' | `HTTP ${number}`

export interface Answer {
  outcome: Outcome
  message: string
}

export interface Clients {
  pools: CustomObjectsApi
  leases: CoordinationV1Api
  core: CoreV1Api
  certificates: CertificatesV1Api
  authorization: AuthorizationV1Api
}

export function clientsFor(kubeconfig: string): Clients {
  const kc = new KubeConfig()
  kc.loadFromFile(kubeconfig)
  return {
    pools: kc.makeApiClient(CustomObjectsApi),
    leases: kc.makeApiClient(CoordinationV1Api),
    core: kc.makeApiClient(CoreV1Api),
    certificates: kc.makeApiClient(CertificatesV1Api),
    authorization: kc.makeApiClient(AuthorizationV1Api),
  }
}

function errorMessage(body: unknown): string {
  if (typeof body !== 'string') return JSON.stringify(body)
  try {
    return (JSON.parse(body) as {message?: string}).message ?? body
  } catch {
    return body
  }
}

export async function classify(request: Promise<unknown>): Promise<Answer> {
  try {
    await request
    return {outcome: 'ok', message: ''}
  } catch (error) {
    if (!(error instanceof ApiException)) throw error
    const message = errorMessage(error.body)
    if (error.code === 403 && message.includes(`ValidatingAdmissionPolicy '${POOLLET_POLICY}'`)) return {outcome: 'policy', message}
    if (error.code === 403 && / cannot [a-z]+ resource /.test(message)) return {outcome: 'RBAC', message}
    return {outcome: `HTTP ${error.code}`, message}
  }
}

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch)
/** A MicroTime as the API writes it: six fractional digits. */
const microNow = () => new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')

const pool = (kind: PoolKind) => ({group: kind.group, version: kind.version, plural: kind.plural})

export function leaseBody(name: string, namespace: string): V1Lease {
  const spec = {holderIdentity: `${name}_matrix`, leaseDurationSeconds: 40, renewTime: microNow()}
  return {apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: {name, namespace}, spec: spec as unknown as V1Lease['spec']}
}

const machine = POOL_KINDS.machine
const volume = POOL_KINDS.volume

export interface Column {
  title: string
  /** The object a refusal message must name. */
  object: string
  run(c: Clients): Promise<unknown>
}

/**
 * Machine poollet p1 patching p2's status as a server-side dry run (nothing stored): refused by the
 * poollet admission policy once kube-apiserver has loaded it, which it does some time after the apply.
 */
export function policyProbe(c: Clients): Promise<unknown> {
  return c.pools.patchClusterCustomObjectStatus({...pool(machine), name: 'p2', body: {status: {state: 'Ready'}}, dryRun: 'All'}, MERGE)
}

const patchStatus = (kind: PoolKind, name: string, status: object): Column => ({
  title: `patch ${name} status`,
  object: name,
  run: (c) => c.pools.patchClusterCustomObjectStatus({...pool(kind), name, body: {status}}, MERGE),
})

const renewLease = (kind: PoolKind, name: string): Column => ({
  title: `renew Lease ${name}`,
  object: name,
  run: (c) => c.leases.patchNamespacedLease({name, namespace: kind.leaseNamespace, body: {spec: {renewTime: microNow()}}}, MERGE),
})

/** An Event about a machine pool, as the poollet's recorder writes it. */
export function eventBody(pool: string, name?: string): CoreV1Event {
  return {
    metadata: name === undefined ? {generateName: `${pool}.`} : {name, namespace: 'default'},
    involvedObject: {apiVersion: `${machine.group}/${machine.version}`, kind: machine.kind, name: pool},
    reason: 'Matrix',
    message: 'access matrix',
    type: 'Normal',
  }
}

/** Events about p1 and p2 that the controller recorded; created by the test before the matrix runs. */
export const CONTROLLER_EVENTS = {p1: 'p1.controller', p2: 'p2.controller'} as const

const createEvent = (pool: string): Column => ({
  title: `create Event ${pool}`,
  object: pool,
  run: (c) => c.core.createNamespacedEvent({namespace: 'default', body: eventBody(pool)}),
})

const patchEvent = (pool: keyof typeof CONTROLLER_EVENTS): Column => ({
  title: `patch Event ${pool}`,
  object: pool,
  run: (c) => c.core.patchNamespacedEvent({name: CONTROLLER_EVENTS[pool], namespace: 'default', body: {count: 2}}, MERGE),
})

const createLease = (kind: PoolKind, name: string): Column => ({
  title: `create Lease ${name}`,
  object: name,
  run: (c) => c.leases.createNamespacedLease({namespace: kind.leaseNamespace, body: leaseBody(name, kind.leaseNamespace)}),
})

/** A CSR for machine pool p1, as a poollet makes it (no approver runs here: it stays pending). */
const createCsr: Column = {
  title: 'create CSR',
  object: '',
  run: async (c) => {
    const {csrPem} = await generateCsr(poolletCsrTemplate(machine, 'p1'))
    const spec = {request: Buffer.from(csrPem).toString('base64'), signerName: CLIENT_SIGNER, usages: [...POOLLET_CSR_USAGES]}
    await c.certificates.createCertificateSigningRequest({body: {metadata: {generateName: 'matrix-'}, spec}})
  },
}

/**
 * The approver's SubjectAccessReview, asked by the identity about itself: may it `create` this
 * subresource of certificatesigningrequests? Allowed is ok, not allowed is RBAC's refusal.
 */
const mayCreateSubresource = (subresource: string): Column => ({
  title: `SAR ${subresource}`,
  object: '',
  run: async (c) => {
    const review = await c.authorization.createSelfSubjectAccessReview({
      body: {spec: {resourceAttributes: {group: CSR_API_GROUP, resource: 'certificatesigningrequests', verb: 'create', subresource}}},
    })
    if (review.status?.allowed !== true) throw new ApiException(403, 'SubjectAccessReview', JSON.stringify({message: `not allowed: cannot create resource certificatesigningrequests/${subresource}`}), {})
  },
})

/** In order: `create Lease p1` runs before `renew Lease p1`, which needs the Lease. */
export const COLUMNS: Column[] = [
  {title: 'list machinepools', object: '', run: (c) => c.pools.listClusterCustomObject(pool(machine))},
  patchStatus(machine, 'p1', {state: 'Ready'}),
  patchStatus(machine, 'p2', {state: 'Ready'}),
  patchStatus(volume, 'v1', {state: 'Available'}),
  // Dry-run: authorization and admission run as for a real delete, and a wrong grant would not cost the pool.
  {title: 'delete p1', object: 'p1', run: (c) => c.pools.deleteClusterCustomObject({...pool(machine), name: 'p1', dryRun: 'All'})},
  createLease(machine, 'p1'),
  renewLease(machine, 'p1'),
  createLease(machine, 'p3'),
  renewLease(machine, 'p2'),
  renewLease(volume, 'v1'),
  {title: 'read Leases', object: '', run: (c) => c.leases.listNamespacedLease({namespace: machine.leaseNamespace})},
  {title: 'Lease in default', object: 'p1', run: (c) => c.leases.createNamespacedLease({namespace: 'default', body: leaseBody('p1', 'default')})},
  {
    title: 'leader Lease',
    object: LEADER_ELECTION_ID,
    // What leader election does: create the Lease, then read and update it (never patch).
    run: async (c) => {
      await c.leases.createNamespacedLease({namespace: CONTROLLER_NAMESPACE, body: leaseBody(LEADER_ELECTION_ID, CONTROLLER_NAMESPACE)}).catch((error: unknown) => {
        if (!(error instanceof ApiException && error.code === 409)) throw error
      })
      const lease = await c.leases.readNamespacedLease({name: LEADER_ELECTION_ID, namespace: CONTROLLER_NAMESPACE})
      await c.leases.replaceNamespacedLease({name: LEADER_ELECTION_ID, namespace: CONTROLLER_NAMESPACE, body: lease})
    },
  },
  createEvent('p1'),
  createEvent('p2'),
  patchEvent('p1'),
  patchEvent('p2'),
  {title: 'read Secrets', object: '', run: (c) => c.core.listNamespacedSecret({namespace: CONTROLLER_NAMESPACE})},
  createCsr,
  mayCreateSubresource(machine.csrSubresource),
  mayCreateSubresource(machine.selfCsrSubresource),
]

export function column(title: string): Column {
  const found = COLUMNS.find((candidate) => candidate.title === title)
  if (found === undefined) throw new Error(`no column ${title}`)
  return found
}
