/**
 * The Unknown write at its edges: the record while a write is out, and a second attempt whose answer
 * is lost, which an earlier attempt's sighting does not settle.
 */
import {expect} from 'chai'
import {RequestLimiter} from '../../../../src/core/lifecycle/request-limiter.ts'
import type {Lease} from '../../../../src/core/types.ts'
import {GRACE, LifecycleFixture, heldWrites, markOut} from '../../../support/lifecycle-fixture.ts'

describe('controller lifecycle: the Unknown write at its edges', () => {
  it('while the write is out, the record says writing', async () => {
    const fx = new LifecycleFixture()
    heldWrites(fx)
    fx.putPool('p', {ready: 'True'})
    await fx.clock.advance(GRACE)
    expect(fx.engine.verdict('p')).to.deep.include({state: 'writing'})
  })

  it('the record of a pool retrying says when it is looked at next, from now', async () => {
    const fx = new LifecycleFixture({confirmLease: () => Promise.reject(new Error('connection reset'))})
    fx.putPool('p', {ready: 'True'})
    await fx.clock.advance(GRACE)
    expect(fx.engine.verdict('p')).to.deep.include({state: 'retrying', at: '2026-01-01T00:00:50.000Z', nextLookAt: '2026-01-01T00:00:51.000Z'})
  })

  it('a second attempt whose answer is lost is not settled by the first attempt’s sighting: only the read back says', async () => {
    const {fx, held} = await markOut()
    // The first write lands; the watch shows it while it is out; its answer is lost: reported by the sighting.
    held[0]!.land()
    fx.deliver('p')
    held[0]!.fail(new Error('no answer within 5000 ms'))
    await fx.clock.advance(0)
    expect(fx.marks).to.have.length(1)
    // Someone removes the Ready condition: marked again. This write does not land and its answer is lost.
    fx.putPool('p', {})
    await fx.clock.advance(0)
    expect(held).to.have.length(2)
    held[1]!.fail(new Error('no answer within 5000 ms'))
    await fx.clock.advance(0)
    expect(fx.marks, 'the read back found no mark').to.have.length(1)
  })

  it('a write still waiting for its turn when leadership is lost was never sent: no failure for the sight', async () => {
    const requests: boolean[] = []
    let limiter: RequestLimiter | undefined
    // While p’s confirming read is out, another urgent request queues for the one slot: p’s write waits behind it.
    const fx = new LifecycleFixture({
      makeLimiter: (clock) => (limiter = new RequestLimiter(clock, {qps: 1000, burst: 1000, concurrency: 1})),
      confirmLease: () => {
        void limiter?.run(() => new Promise<void>(() => {}), {urgent: true})
        return Promise.resolve<Lease | undefined>(undefined)
      },
      onRequest: (ok) => requests.push(ok),
    })
    fx.putPool('p', {ready: 'True'})
    await fx.clock.advance(GRACE)
    expect(limiter?.queued, 'the write waits its turn').to.equal(1)
    fx.engine.setLeader(false)
    await fx.clock.advance(0)
    expect(requests, 'the confirming read answered; nothing else').to.deep.equal([true])
    expect(fx.store.script.calls('writeConditions')).to.equal(0)
  })
})
