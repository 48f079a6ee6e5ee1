/**
 * What the identity tests need: a private control plane (the policy and RBAC are cluster-wide) with
 * deploy/default's layers and the opt-in CSR approver's RBAC applied, optionally the real CSR signer,
 * bootstrap tokens, and CSRs of any shape made with @peculiar/x509.
 */
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import {CertificatesV1Api, CoreV1Api, KubeConfig, type V1CertificateSigningRequest} from '@kubernetes/client-node'
import {webcrypto} from 'node:crypto'
import {ControlPlane, type Identity} from '../../src/controlplane/control-plane.ts'
import type {PoolKind} from '../../src/core/pool-kinds.ts'
import {DEPLOY_DIR} from './control-plane.ts'
import {controllerIdentity} from './controller-env.ts'

x509.cryptoProvider.set(webcrypto)

export async function identityPlane(options: {signingDurationSeconds?: number} = {}): Promise<{plane: ControlPlane; controller: Identity}> {
  const plane = await ControlPlane.start()
  try {
    const controller = await controllerIdentity(plane)
    await plane.kubectl(['apply', '--server-side', '-k', `${DEPLOY_DIR}csr-approver`])
    if (options.signingDurationSeconds !== undefined) await plane.startCsrSigner({signingDurationSeconds: options.signingDurationSeconds})
    return {plane, controller}
  } catch (error) {
    await plane.stop()
    throw error
  }
}

export function bootstrapToken(plane: ControlPlane, kind: PoolKind): Promise<Identity> {
  return plane.bootstrapTokenIdentity([kind.bootstrapperGroup])
}

export function clients(kubeconfig: string): {certificates: CertificatesV1Api; core: CoreV1Api} {
  const kc = new KubeConfig()
  kc.loadFromFile(kubeconfig)
  return {certificates: kc.makeApiClient(CertificatesV1Api), core: kc.makeApiClient(CoreV1Api)}
}

export interface CsrShape {
  commonName: string
  organizations: string[]
  usages: string[]
  dnsNames?: string[]
  signerName?: string
}

/** Creates a CSR of the given shape as the identity; resolves with its name. */
export async function createCsr(kubeconfig: string, shape: CsrShape): Promise<string> {
  const alg = {name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256'}
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{CN: [shape.commonName]}, ...shape.organizations.map((o) => ({O: [o]}))],
    keys,
    signingAlgorithm: alg,
    extensions: shape.dnsNames ? [new x509.SubjectAlternativeNameExtension(shape.dnsNames.map((value) => ({type: 'dns' as const, value})))] : [],
  })
  const body: V1CertificateSigningRequest = {
    metadata: {generateName: 'test-'},
    spec: {
      request: Buffer.from(request.toString('pem')).toString('base64'),
      signerName: shape.signerName ?? 'kubernetes.io/kube-apiserver-client',
      usages: shape.usages,
    },
  }
  const created = await clients(kubeconfig).certificates.createCertificateSigningRequest({body})
  return created.metadata?.name ?? ''
}

export async function readCsr(plane: ControlPlane, name: string): Promise<V1CertificateSigningRequest> {
  return clients(plane.adminKubeconfig).certificates.readCertificateSigningRequest({name})
}

export const approved = (csr: V1CertificateSigningRequest) => (csr.status?.conditions ?? []).some((c) => c.type === 'Approved')

/** The Events recorded about one CSR, as reason: message. */
export async function csrEvents(plane: ControlPlane, name: string): Promise<Array<{reason: string; message: string; type: string}>> {
  const list = await clients(plane.adminKubeconfig).core.listNamespacedEvent({namespace: 'default', fieldSelector: `involvedObject.name=${name}`})
  return list.items.map((e) => ({reason: e.reason ?? '', message: e.message ?? '', type: e.type ?? ''}))
}

export async function listCsrs(plane: ControlPlane): Promise<V1CertificateSigningRequest[]> {
  return (await clients(plane.adminKubeconfig).certificates.listCertificateSigningRequest()).items
}
