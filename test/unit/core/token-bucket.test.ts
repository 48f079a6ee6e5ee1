import {expect} from 'chai'
import {TokenBucket} from '../../../src/core/token-bucket.ts'
import {FakeClock} from '../../support/fake-clock.ts'

describe('--qps/--burst token bucket', () => {
  it('lets a burst through at once, then spaces requests at 1/qps, and refills while idle', async () => {
    const clock = new FakeClock()
    const bucket = new TokenBucket(10, 3, clock)
    expect([bucket.reserve(), bucket.reserve(), bucket.reserve()]).to.deep.equal([0, 0, 0])
    expect(bucket.reserve()).to.be.closeTo(100, 1e-9)
    expect(bucket.reserve()).to.be.closeTo(200, 1e-9)
    await clock.advance(10_000)
    expect(bucket.reserve()).to.equal(0)
  })

  it('tryTake: takes a token only when one is there, and refills', async () => {
    const clock = new FakeClock()
    const bucket = new TokenBucket(1, 2, clock)
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).to.deep.equal([true, true, false])
    await clock.advance(999)
    expect(bucket.tryTake(), 'not yet a whole token').to.be.false
    await clock.advance(500)
    expect(bucket.tryTake()).to.be.true
    expect(bucket.tryTake()).to.be.false
  })
})
