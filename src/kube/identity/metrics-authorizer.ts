/**
 * Who may read the controller's /metrics, decided as controller-runtime's
 * `filters.WithAuthenticationAndAuthorization` decides it (and kube-rbac-proxy before it): the bearer
 * token of the request is checked with a TokenReview (401 unless authenticated), and its user with a
 * SubjectAccessReview for `get` on the non-resource URL (403 unless allowed), so RBAC's
 * `nonResourceURLs: ["/metrics"]` says who scrapes. Answers are kept 10 s per token (controller-runtime's
 * delegating authenticator and authorizer cache as long), so a Prometheus scraping every 30 s costs
 * two reviews a scrape at most, and a burst of scrapes with one token costs two in all; a failed review
 * is not kept, and answers 500.
 */
import {createHash} from 'node:crypto'
import type {KubeConfig, V1SubjectAccessReview, V1TokenReview} from '@kubernetes/client-node'
import {errorMessage, type Clock, type Logger} from '../../core/index.ts'
import {translateApiError} from '../http/api-errors.ts'
import {apiRequest} from '../http/api-request.ts'

export type MetricsVerdict = {status: 200; user: string} | {status: 401 | 403 | 500; reason: string}

/** The two reviews, as a port: the unit test scripts them, production asks kube-apiserver. */
export interface ReviewApi {
  tokenReview(token: string): Promise<V1TokenReview>
  subjectAccessReview(spec: NonNullable<V1SubjectAccessReview['spec']>): Promise<V1SubjectAccessReview>
}

const REQUEST_TIMEOUT_MS = 5_000
/** How long an answer about one token is kept. */
export const VERDICT_TTL_MS = 10_000
/** Tokens whose answers are kept; past it the oldest is forgotten. */
const VERDICTS_KEPT = 1_024

export function kubeReviewApi(kc: KubeConfig): ReviewApi {
  return {
    tokenReview: (token) =>
      apiRequest<V1TokenReview>(kc, {method: 'POST', path: '/apis/authentication.k8s.io/v1/tokenreviews', body: {apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: {token}}, timeoutMs: REQUEST_TIMEOUT_MS}),
    subjectAccessReview: (spec) =>
      apiRequest<V1SubjectAccessReview>(kc, {method: 'POST', path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', body: {apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec}, timeoutMs: REQUEST_TIMEOUT_MS}),
  }
}

export class MetricsAuthorizer {
  private readonly verdicts = new Map<string, {verdict: MetricsVerdict; until: number}>()
  private readonly o: {api: ReviewApi; clock: Clock; logger: Logger}

  constructor(o: {api: ReviewApi; clock: Clock; logger: Logger}) {
    this.o = o
  }

  /** The verdict on a request for `path` with this Authorization header. */
  async authorize(authorization: string | undefined, path: string): Promise<MetricsVerdict> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')
    if (match === null) return {status: 401, reason: 'no bearer token'}
    const token = match[1] ?? ''
    const key = `${path} ${createHash('sha256').update(token).digest('hex')}`
    const now = this.o.clock.monotonic()
    const kept = this.verdicts.get(key)
    if (kept !== undefined && kept.until > now) return kept.verdict
    const verdict = await this.review(token, path)
    if (verdict.status !== 500) {
      this.verdicts.delete(key)
      if (this.verdicts.size >= VERDICTS_KEPT) this.verdicts.delete(this.verdicts.keys().next().value ?? '')
      this.verdicts.set(key, {verdict, until: now + VERDICT_TTL_MS})
    }
    return verdict
  }

  private async review(token: string, path: string): Promise<MetricsVerdict> {
    let user: NonNullable<V1TokenReview['status']>['user']
    try {
      const review = await this.o.api.tokenReview(token)
      if (review.status?.authenticated !== true) return {status: 401, reason: review.status?.error ? `token not authenticated: ${review.status.error}` : 'token not authenticated'}
      user = review.status.user
    } catch (error) {
      const reason = errorMessage(translateApiError(error, {verb: 'create', resource: 'tokenreview'}))
      this.o.logger.warn({path, error: reason}, 'could not review a scrape\'s token')
      return {status: 500, reason: 'could not review the token'}
    }
    const username = user?.username ?? ''
    try {
      const review = await this.o.api.subjectAccessReview({user: username, groups: user?.groups, uid: user?.uid, extra: user?.extra, nonResourceAttributes: {path, verb: 'get'}})
      if (review.status?.allowed !== true) return {status: 403, reason: `${username} may not get ${path}`}
    } catch (error) {
      const reason = errorMessage(translateApiError(error, {verb: 'create', resource: 'subjectaccessreview'}))
      this.o.logger.warn({path, user: username, error: reason}, 'could not review a scrape\'s user')
      return {status: 500, reason: 'could not review the user'}
    }
    return {status: 200, user: username}
  }
}
