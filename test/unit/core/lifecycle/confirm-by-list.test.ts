/**
 * The engine hands its listLeases option to the confirm batcher (test/unit/core/lifecycle/
 * confirm-batcher.test.ts tests the batcher alone): a mass death waiting in the limiter is confirmed by
 * one LIST, not a GET per pool. Found undefended by `npm run mutation` (issue 30).
 */
import {expect} from 'chai'
import {RequestLimiter} from '../../../../src/core/lifecycle/request-limiter.ts'
import {GRACE, LifecycleFixture} from '../../../support/lifecycle-fixture.ts'

describe('controller lifecycle: confirming a mass death', () => {
  it('40 pools falling silent together behind a limiter of one request a second: one GET, one LIST for the 39 waiting behind it, 40 marks', async () => {
    let lists = 0
    let gets = 0
    const fx: LifecycleFixture = new LifecycleFixture({
      makeLimiter: (clock) => new RequestLimiter(clock, {qps: 1, burst: 1, concurrency: 1}),
      listLeases: () => {
        lists++
        return Promise.resolve([...fx.apiLeases.values()])
      },
      confirmLease: (name) => {
        gets++
        return Promise.resolve(fx.apiLeases.get(name))
      },
    })
    for (let i = 0; i < 40; i++) fx.putPool(`p${i}`, {ready: 'True'})
    await fx.advance(GRACE)
    for (let i = 0; i < 60; i++) await fx.advance(1_000)
    expect({lists, gets, marks: fx.marks.length}).to.deep.equal({lists: 1, gets: 1, marks: 40})
  })
})
