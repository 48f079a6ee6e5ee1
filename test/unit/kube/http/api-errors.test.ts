import {expect} from 'chai'
import {ConflictError, ForbiddenError, NotFoundError, RejectedError, isAnswer} from '../../../../src/core/errors.ts'
import {ApiStatusError} from '../../../../src/kube/http/api-request.ts'
import {translateApiError} from '../../../../src/kube/http/api-errors.ts'

const translate = (code: number, reason?: string) =>
  translateApiError(new ApiStatusError(code, {kind: 'Status', message: `said ${code}`, reason}), {verb: 'update', resource: 'machinepools/status p'})

describe('translateApiError: which failures are answers', () => {
  it('a refusal as it was (400, 422, a webhook denial) is a RejectedError with its status, and an answer', () => {
    for (const code of [400, 422, 410]) {
      const error = translate(code)
      expect(error, String(code)).to.be.instanceOf(RejectedError)
      expect((error as RejectedError).status).to.equal(code)
      expect(error.message).to.equal(`update machinepools/status p: HTTP ${code}: said ${code}`)
      expect(isAnswer(error)).to.equal(true)
    }
  })

  it('429 and 5xx are the server in trouble: no answer', () => {
    for (const code of [429, 500, 503, 504]) {
      const error = translate(code)
      expect(error, String(code)).to.not.be.instanceOf(RejectedError)
      expect(isAnswer(error), String(code)).to.equal(false)
    }
    expect(isAnswer(new Error('update machinepools/status p: no answer within 5000 ms'))).to.equal(false)
  })

  it('401/403, 404 and 409 keep their own kinds, all answers', () => {
    expect(translate(403)).to.be.instanceOf(ForbiddenError)
    expect(translate(404)).to.be.instanceOf(NotFoundError)
    expect(translate(409)).to.be.instanceOf(ConflictError)
    for (const code of [401, 403, 404, 409]) expect(isAnswer(translate(code)), String(code)).to.equal(true)
  })
})
