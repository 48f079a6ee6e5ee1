import type {V1SubjectAccessReview, V1TokenReview} from '@kubernetes/client-node'
import {expect} from 'chai'
import {ApiStatusError} from '../../../../src/kube/http/api-request.ts'
import {MetricsAuthorizer, VERDICT_TTL_MS, type ReviewApi} from '../../../../src/kube/identity/metrics-authorizer.ts'
import {FakeClock} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'

/** kube-apiserver's two reviews, scripted: tokens to users, and the users allowed `get` on a path. */
class Reviews implements ReviewApi {
  readonly calls: string[] = []
  readonly users = new Map([['good', 'prometheus'], ['nobody', 'nobody']])
  readonly allowed = new Set(['prometheus /metrics'])
  fail = false
  tokenReview(token: string): Promise<V1TokenReview> {
    this.calls.push(`token ${token}`)
    if (this.fail) return Promise.reject(new ApiStatusError(503, {message: 'unavailable'}))
    const username = this.users.get(token)
    return Promise.resolve({spec: {token}, status: username === undefined ? {authenticated: false, error: 'invalid bearer token'} : {authenticated: true, user: {username, groups: ['system:authenticated']}}})
  }
  subjectAccessReview(spec: NonNullable<V1SubjectAccessReview['spec']>): Promise<V1SubjectAccessReview> {
    this.calls.push(`sar ${spec.user} ${spec.nonResourceAttributes?.verb} ${spec.nonResourceAttributes?.path}`)
    return Promise.resolve({spec, status: {allowed: this.allowed.has(`${spec.user} ${spec.nonResourceAttributes?.path}`)}})
  }
}

describe('MetricsAuthorizer: who may read /metrics (TokenReview, then SubjectAccessReview)', () => {
  const make = () => {
    const api = new Reviews()
    const clock = new FakeClock()
    return {api, clock, authorizer: new MetricsAuthorizer({api, clock, logger: new FakeLogger()})}
  }

  it('401 without a bearer token (no review asked), 401 for a token not authenticated, 403 for a user not allowed get, 200 for one allowed', async () => {
    const {api, authorizer} = make()
    expect(await authorizer.authorize(undefined, '/metrics')).to.deep.equal({status: 401, reason: 'no bearer token'})
    expect(await authorizer.authorize('Basic abc', '/metrics')).to.deep.equal({status: 401, reason: 'no bearer token'})
    expect(api.calls).to.deep.equal([])
    expect(await authorizer.authorize('Bearer forged', '/metrics')).to.deep.equal({status: 401, reason: 'token not authenticated: invalid bearer token'})
    expect(await authorizer.authorize('Bearer nobody', '/metrics')).to.deep.equal({status: 403, reason: 'nobody may not get /metrics'})
    expect(await authorizer.authorize('Bearer good', '/metrics')).to.deep.equal({status: 200, user: 'prometheus'})
    expect(api.calls).to.deep.equal(['token forged', 'token nobody', 'sar nobody get /metrics', 'token good', 'sar prometheus get /metrics'])
  })

  it(`keeps a verdict ${VERDICT_TTL_MS} ms per token and path, then asks again`, async () => {
    const {api, clock, authorizer} = make()
    await authorizer.authorize('Bearer good', '/metrics')
    await authorizer.authorize('Bearer good', '/metrics')
    expect(api.calls).to.have.length(2)
    api.allowed.clear()
    await clock.advance(VERDICT_TTL_MS - 1)
    expect((await authorizer.authorize('Bearer good', '/metrics')).status, 'still kept').to.equal(200)
    await clock.advance(1)
    expect((await authorizer.authorize('Bearer good', '/metrics')).status, 'asked again: RBAC took it away').to.equal(403)
    expect(api.calls).to.have.length(4)
  })

  it('answers 500 when a review fails, and keeps no such verdict', async () => {
    const {api, authorizer} = make()
    api.fail = true
    expect(await authorizer.authorize('Bearer good', '/metrics')).to.deep.equal({status: 500, reason: 'could not review the token'})
    api.fail = false
    expect((await authorizer.authorize('Bearer good', '/metrics')).status).to.equal(200)
  })
})
