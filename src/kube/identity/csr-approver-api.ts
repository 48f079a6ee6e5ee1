/**
 * What the CSR approver asks of kube-apiserver besides its cache, as a port of three calls: the
 * SubjectAccessReview, the approval, and whether a pool exists. kubeCsrApproverApi() is the one that
 * talks to the API; the approver's unit test scripts its own (test/unit/kube/identity/csr-approver.test.ts).
 */
import type {KubeConfig, V1CertificateSigningRequest, V1SubjectAccessReview, V1SubjectAccessReviewSpec} from '@kubernetes/client-node'
import type {PoolKind} from '../../core/index.ts'
import {httpStatus} from '../http/api-errors.ts'
import {apiRequest} from '../http/api-request.ts'
import {csrPath} from './certificate-request.ts'

const REQUEST_TIMEOUT_MS = 10_000
const SUBJECT_ACCESS_REVIEWS_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews'

export interface CsrApproverApi {
  /** The authorizer's answer to a SubjectAccessReview of this spec. */
  review(spec: V1SubjectAccessReviewSpec): Promise<{allowed: boolean; reason?: string}>
  /**
   * PUT of the approval subresource with this body. The body carries the CSR's metadata as the cache
   * read it, uid and resourceVersion included: kube-apiserver then refuses (409) an approval of a CSR
   * that changed, or was deleted and made again under the same name, after it was judged.
   */
  approve(name: string, body: V1CertificateSigningRequest): Promise<void>
  /** Whether the pool of this kind and name exists (a 404 is false; any other failure rejects). */
  poolExists(kind: PoolKind, name: string): Promise<boolean>
}

export function kubeCsrApproverApi(kc: KubeConfig): CsrApproverApi {
  return {
    async review(spec) {
      const body: V1SubjectAccessReview = {apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec}
      const review = await apiRequest<V1SubjectAccessReview>(kc, {method: 'POST', path: SUBJECT_ACCESS_REVIEWS_PATH, body, timeoutMs: REQUEST_TIMEOUT_MS})
      return {allowed: review.status?.allowed === true, reason: review.status?.reason}
    },
    async approve(name, body) {
      await apiRequest(kc, {method: 'PUT', path: csrPath(name, 'approval'), body, timeoutMs: REQUEST_TIMEOUT_MS})
    },
    async poolExists(kind, name) {
      try {
        await apiRequest(kc, {method: 'GET', path: `/apis/${kind.group}/${kind.version}/${kind.plural}/${encodeURIComponent(name)}`, timeoutMs: REQUEST_TIMEOUT_MS})
        return true
      } catch (error) {
        if (httpStatus(error) === 404) return false
        throw error
      }
    },
  }
}
