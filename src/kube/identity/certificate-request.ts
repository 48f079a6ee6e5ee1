/**
 * Asks the cluster for a client certificate: creates a CertificateSigningRequest and waits, bounded, for
 * it to be approved and issued, as client-go's csr.RequestCertificate and WaitForCertificate do (here by
 * polling its one object: a GET per second costs nothing and cannot miss an update). Each failure is one
 * typed error whose message says what to check.
 */
import type {KubeConfig, V1CertificateSigningRequest} from '@kubernetes/client-node'
import {errorMessage, formatDuration, sleep, type Clock, type Logger} from '../../core/index.ts'
import {httpStatus, translateApiError} from '../http/api-errors.ts'
import {apiRequest} from '../http/api-request.ts'

/** The path of the cluster's CSRs, or of one of them (and a subresource of it). */
export function csrPath(name?: string, subresource?: string): string {
  const collection = '/apis/certificates.k8s.io/v1/certificatesigningrequests'
  if (name === undefined) return collection
  return `${collection}/${encodeURIComponent(name)}${subresource === undefined ? '' : `/${subresource}`}`
}

/** The CSR was denied (by an approver or a person). */
export class CsrDeniedError extends Error {
  override readonly name = 'CsrDeniedError'
}

/** The signer gave up on the CSR (condition Failed). */
export class CsrFailedError extends Error {
  override readonly name = 'CsrFailedError'
}

/** No certificate within the timeout. */
export class CsrTimeoutError extends Error {
  override readonly name = 'CsrTimeoutError'
}

/** The API server refused the requesting credentials (401) or their right to create CSRs (403). */
export class CsrRefusedError extends Error {
  override readonly name = 'CsrRefusedError'
  readonly status: number
  constructor(message: string, status: number) {
    super(message)
    this.status = status
  }
}

export interface CertificateRequest {
  csrPem: string
  signerName: string
  usages: readonly string[]
  /** The CSR's generateName, e.g. `machinepool-p1-`. */
  generateName: string
}

export interface CertificateRequestOptions {
  clock: Clock
  logger: Logger
  /** Who asks, for messages: e.g. `the bootstrap kubeconfig /etc/ironpool/bootstrap.kubeconfig`. */
  requester: string
  /** How long to wait for approval and issue, in all. */
  timeoutMs: number
  /** Default 1 s. */
  pollMs?: number
  /** Deadline of each request. Default 10 s. */
  requestTimeoutMs?: number
  /** A progress line at most this often while waiting. Default 10 s. */
  progressMs?: number
  signal?: AbortSignal
}

function condition(csr: V1CertificateSigningRequest, type: string) {
  return csr.status?.conditions?.find((c) => c.type === type && c.status !== 'False')
}

/** Creates the CSR and resolves with the issued certificate (PEM) and the CSR's name. */
export async function requestCertificate(kc: KubeConfig, request: CertificateRequest, o: CertificateRequestOptions): Promise<{certPem: string; name: string}> {
  const requestTimeoutMs = o.requestTimeoutMs ?? 10_000
  const pollMs = o.pollMs ?? 1_000
  const progressMs = o.progressMs ?? 10_000
  // The wire JSON: spec.request and status.certificate are base64 strings, times RFC 3339 strings.
  const body: V1CertificateSigningRequest = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: {generateName: request.generateName},
    spec: {request: Buffer.from(request.csrPem).toString('base64'), signerName: request.signerName, usages: [...request.usages]},
  }
  let created: V1CertificateSigningRequest
  try {
    created = await apiRequest<V1CertificateSigningRequest>(kc, {method: 'POST', path: csrPath(), body, timeoutMs: requestTimeoutMs, signal: o.signal})
  } catch (error) {
    const status = httpStatus(error)
    if (status === 401) {
      throw new CsrRefusedError(`${o.requester} was not accepted by the API server (401 Unauthorized): a bootstrap token that is unknown, expired or not usable for authentication, or a certificate the cluster does not trust`, 401)
    }
    if (status === 403) throw new CsrRefusedError(`${o.requester} may not create certificatesigningrequests: ${errorMessage(translateApiError(error, {verb: 'create', resource: 'certificatesigningrequest'}))}`, 403)
    throw translateApiError(error, {verb: 'create', resource: 'certificatesigningrequest'})
  }
  const name = created.metadata?.name ?? ''
  const uid = created.metadata?.uid
  o.logger.info({csr: name, signer: request.signerName}, 'certificate signing request created; waiting for approval and a certificate')

  const started = o.clock.monotonic()
  let lastProgress = started
  let approvedSeen = false
  for (;;) {
    const elapsed = o.clock.monotonic() - started
    if (elapsed >= o.timeoutMs) {
      throw new CsrTimeoutError(
        `certificate signing request ${name} was ${approvedSeen ? 'approved but not issued' : 'not approved'} within ${formatDuration(o.timeoutMs)}: ` +
          (approvedSeen
            ? `is a signer for ${request.signerName} running (kube-controller-manager's csrsigning controller)?`
            : 'is an approver running (ironpool controller --approve-poollet-csrs, or IronCore\'s controller manager), and does the requester hold the CSR subresource permission it checks?'),
      )
    }
    let csr: V1CertificateSigningRequest | undefined
    try {
      csr = await apiRequest<V1CertificateSigningRequest>(kc, {method: 'GET', path: csrPath(name), timeoutMs: requestTimeoutMs, signal: o.signal})
    } catch (error) {
      if (o.signal?.aborted) throw error
      if (httpStatus(error) === 404) throw new CsrFailedError(`certificate signing request ${name} was deleted before it was issued`)
      o.logger.warn({csr: name, error: errorMessage(error)}, 'could not read the certificate signing request; trying again')
    }
    if (csr !== undefined) {
      if (uid !== undefined && csr.metadata?.uid !== uid) throw new CsrFailedError(`certificate signing request ${name} was replaced by another object of the same name`)
      const denied = condition(csr, 'Denied')
      if (denied) throw new CsrDeniedError(`certificate signing request ${name} was denied${denied.reason ? ` (${denied.reason})` : ''}${denied.message ? `: ${denied.message}` : ''}`)
      const failed = condition(csr, 'Failed')
      if (failed) throw new CsrFailedError(`certificate signing request ${name} failed${failed.reason ? ` (${failed.reason})` : ''}${failed.message ? `: ${failed.message}` : ''}`)
      if (condition(csr, 'Approved')) {
        if (!approvedSeen) o.logger.info({csr: name}, 'certificate signing request approved; waiting for the signer')
        approvedSeen = true
        const certificate = csr.status?.certificate
        if (certificate) return {certPem: Buffer.from(certificate, 'base64').toString('utf8'), name}
      }
    }
    const now = o.clock.monotonic()
    if (now - lastProgress >= progressMs) {
      lastProgress = now
      o.logger.info({csr: name, waited: formatDuration(Math.round(now - started)), timeout: formatDuration(o.timeoutMs)}, approvedSeen ? 'still waiting for the signer' : 'still waiting for approval')
    }
    await sleep(o.clock, pollMs, o.signal)
  }
}
