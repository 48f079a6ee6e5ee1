/**
 * What the identity tests need: a private control plane (the policy and RBAC are cluster-wide) with
 * deploy/default's layers and the opt-in CSR approver's RBAC applied, optionally the real CSR signer,
 * bootstrap tokens, and CSRs of any shape (made by test/support/csr-craft.ts).
 */
import {CertificatesV1Api, CoreV1Api, KubeConfig, type V1CertificateSigningRequest} from '@kubernetes/client-node'
import {ensureBinaries} from '../../src/controlplane/binaries.ts'
import {CLIENT_SIGNER, POOLLET_CSR_USAGES} from '../../src/core/identity/poollet-csr.ts'
import {ControlPlane, type Identity} from '../../src/controlplane/control-plane.ts'
import type {PoolKind} from '../../src/core/pool-kinds.ts'
import {DEPLOY_DIR} from './control-plane.ts'
import {controllerIdentity} from './controller-env.ts'

/** How long the first test that needs kube-controller-manager may take to build it (a cold build on a busy machine). */
const BUILD_TIMEOUT_MS = 15 * 60_000

/**
 * A private control plane for the identity tests; with signingDurationSeconds, the real CSR signer
 * too. kube-controller-manager is built the first time a test needs it (the suite's other tests and
 * the sandbox do not): the calling hook's timeout is lifted while it builds, and its time added after.
 */
export async function identityPlane(options: {signingDurationSeconds?: number; hook?: Mocha.Context} = {}): Promise<{plane: ControlPlane; controller: Identity}> {
  if (options.signingDurationSeconds !== undefined) {
    const timeout = options.hook?.timeout()
    const started = Date.now()
    if (timeout) options.hook?.timeout(BUILD_TIMEOUT_MS)
    await ensureBinaries({names: ['kube-controller-manager'], progress: (line) => process.stderr.write(`${line}\n`)})
    // Mocha also fails a hook whose whole duration exceeds its timeout: the build's time is added to it.
    if (timeout) options.hook?.timeout(timeout + (Date.now() - started))
  }
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

/** Creates a CSR of this PEM text (real DER, test/support/csr-craft.ts) as the identity; resolves with its name. */
export async function submitCsr(kubeconfig: string, csr: {pem: string; signerName?: string; usages?: readonly string[]; name?: string}): Promise<string> {
  const body: V1CertificateSigningRequest = {
    metadata: csr.name === undefined ? {generateName: 'test-'} : {name: csr.name},
    spec: {
      request: Buffer.from(csr.pem).toString('base64'),
      signerName: csr.signerName ?? CLIENT_SIGNER,
      usages: [...(csr.usages ?? POOLLET_CSR_USAGES)],
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
