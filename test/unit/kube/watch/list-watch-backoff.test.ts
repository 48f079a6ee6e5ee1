import {expect} from 'chai'
import {WatchBackoff} from '../../../../src/kube/watch/watch-backoff.ts'
import {FakeClock} from '../../../support/fake-clock.ts'

describe('WatchBackoff', () => {
  it('doubles from 200 ms and stops at 30 s when failures follow each other', () => {
    const clock = new FakeClock()
    const backoff = new WatchBackoff(clock, {}, () => 0)
    const delays = Array.from({length: 10}, () => backoff.next())
    expect(delays).to.deep.equal([200, 400, 800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000])
  })

  it('takes off at most the jitter fraction and never exceeds the bound', () => {
    const clock = new FakeClock()
    const low = new WatchBackoff(clock, {jitter: 0.2}, () => 0.999_999)
    expect(low.next()).to.equal(160)
    const many = new WatchBackoff(clock, {jitter: 0.2}, Math.random)
    for (let i = 0; i < 50; i++) {
      const base = Math.min(30_000, 200 * 2 ** i)
      const delay = many.next()
      expect(delay, `attempt ${i}`).to.be.within(Math.floor(base * 0.8), base)
    }
  })

  it('starts again from the first delay after a quiet spell of resetAfterMs', async () => {
    const clock = new FakeClock()
    const backoff = new WatchBackoff(clock, {resetAfterMs: 60_000}, () => 0)
    backoff.next()
    backoff.next()
    expect(backoff.next()).to.equal(800)
    await clock.advance(59_999)
    expect(backoff.next(), 'too soon to forget').to.equal(1600)
    await clock.advance(60_000)
    expect(backoff.next()).to.equal(200)
  })
})
