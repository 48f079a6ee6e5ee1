/**
 * The engine's requests at their edges: a confirming read cut short by the end of leadership, failing
 * twice (no write's trouble), answered after the pool moved on, or finding the Lease gone; and the
 * read back of a write of unknown outcome whose era ended: how often, and not once the watch settled it.
 */
import {expect} from 'chai'
import type {Lease} from '../../../../src/core/types.ts'
import {GRACE, LifecycleFixture, markOut} from '../../../support/lifecycle-fixture.ts'

describe('controller lifecycle: requests at their edges', () => {
  it('a confirming read cut short by the end of leadership is no failure: nothing logged, nothing told to the sight', async () => {
    const requests: boolean[] = []
    const fx = new LifecycleFixture({confirmLease: () => new Promise<Lease | undefined>(() => {}), onRequest: (ok) => requests.push(ok)})
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE)
    fx.engine.setLeader(false)
    await fx.advance(0)
    expect(fx.logger.at('error')).to.deep.equal([])
    expect(requests).to.deep.equal([])
  })

  it('confirming reads failing again and again are no write’s trouble: no WriteRetrying Event', async () => {
    const fx = new LifecycleFixture({confirmLease: () => Promise.reject(new Error('connection reset'))})
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE + 10_000)
    expect(fx.logger.at('error').length, 'retried').to.be.greaterThan(2)
    expect(fx.events.events).to.deep.equal([])
  })

  it('a confirming read answered after the pool renewed (the watch told first) is not taken for a renewal it had not delivered', async () => {
    let answer: (lease: Lease | undefined) => void = () => {}
    const fx = new LifecycleFixture({confirmLease: () => new Promise<Lease | undefined>((resolve) => (answer = resolve))})
    fx.putPool('p', {ready: 'True'})
    fx.renew('p', 'r1')
    await fx.advance(GRACE)
    const old = fx.apiLeases.get('p')
    fx.renew('p', 'r2')
    answer(old)
    await fx.advance(0)
    expect(fx.logger.at('info').map((e) => e.msg)).to.not.include('pool not marked: a fresh read of its Lease shows a renewal the watch had not delivered')
    expect(fx.engine.overdueStats().pools).to.equal(0)
  })

  it('a Lease gone from the API is silence: the pool whose Lease was deleted is marked', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    fx.renew('p', 'r1')
    await fx.advance(10_000)
    fx.apiLeases.delete('p')
    await fx.advance(GRACE)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
  })

  it('a renewal the watch had not delivered, found by the confirming read, is logged with the kind and the pool', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    fx.renew('p', 'r1')
    await fx.advance(GRACE - 1_000)
    fx.renewUnseen('p', 'r2')
    await fx.advance(1_000)
    expect(fx.marks).to.deep.equal([])
    expect(fx.logger.at('info').filter((e) => e.msg === 'pool not marked: a fresh read of its Lease shows a renewal the watch had not delivered').map((e) => e.obj)).to.deep.equal([{kind: 'machine', pool: 'p'}])
  })

  describe('a write of unknown outcome whose era ended', () => {
    /** p's write was out when leadership was lost; its answer is lost, and so is every read back. */
    async function eraEndedUnknown() {
      const {fx, held} = await markOut()
      fx.engine.setLeader(false)
      return {fx, held}
    }

    it('is read back eight times after the first, on a backoff, then forgotten: a later sighting of its mark is not its report', async () => {
      const {fx, held} = await eraEndedUnknown()
      fx.store.script.failNext('get', () => new Error('no answer within 5000 ms'), 100)
      held[0]!.fail(new Error('no answer within 5000 ms'))
      await fx.clock.advance(0)
      expect(fx.store.script.calls('get'), 'the first read back').to.equal(1)
      // Backoffs of 1, 2, 4, 8 s, then 10 s (the cap) four times: 55 s.
      await fx.clock.advance(54_999)
      expect(fx.store.script.calls('get')).to.equal(8)
      await fx.clock.advance(1)
      expect(fx.store.script.calls('get')).to.equal(9)
      await fx.clock.advance(10 * GRACE)
      expect(fx.store.script.calls('get')).to.equal(9)
      expect(fx.clock.pending).to.equal(0)
      // It had landed after all; a standby does not report it.
      held[0]!.land()
      fx.deliver('p')
      expect(fx.marks).to.deep.equal([])
    })

    it('is not read back once the watch has shown it landed: reported once, by the watch', async () => {
      const {fx, held} = await eraEndedUnknown()
      fx.store.script.failNext('get', () => new Error('no answer within 5000 ms'))
      held[0]!.land()
      held[0]!.fail(new Error('no answer within 5000 ms'))
      await fx.clock.advance(0)
      expect(fx.store.script.calls('get')).to.equal(1)
      fx.deliver('p')
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
      await fx.clock.advance(60_000)
      expect(fx.store.script.calls('get'), 'no read back armed after the watch settled it').to.equal(1)
      expect(fx.marks).to.have.length(1)
    })
  })
})
