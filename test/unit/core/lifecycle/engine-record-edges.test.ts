/**
 * The engine's verdict record and its write's end at their edges: when each state of the record
 * began, the state of a pool whose request is out while the view is blind, what a write's answer
 * (or its loss) settles, and what a write that ends after the pool moved on leaves armed.
 */
import {expect} from 'chai'
import {ForbiddenError} from '../../../../src/core/errors.ts'
import {parseMaxUnhealthy} from '../../../../src/core/lifecycle/mass-silence/max-unhealthy.ts'
import type {Lease, Pool, PoolCondition} from '../../../../src/core/types.ts'
import {GRACE, LifecycleFixture, gatedLimiter, heldWrites, markOut, type FixtureOptions} from '../../../support/lifecycle-fixture.ts'

/** The wall clock's reading `ms` after the fixture's start, as the record writes it. */
const at = (ms: number) => new Date(Date.parse('2026-01-01T00:00:00Z') + ms).toISOString()


/** The first confirming read fails (a retry 1 s later), the next ones are told by `then`. */
function failsOnce(then: () => Promise<Lease | undefined> = () => Promise.resolve(undefined)): FixtureOptions {
  let confirms = 0
  return {confirmLease: () => (++confirms === 1 ? Promise.reject(new Error('connection reset')) : then())}
}

describe('controller lifecycle: the verdict record and the write at their edges', () => {
  describe('when the record says the state began', () => {
    it('a pool marked after a retry is marked since its mark, not since its deadline', async () => {
      // kills 927:7 (marked → false: since fell back to the deadline)
      const fx = new LifecycleFixture(failsOnce())
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE + 1_000)
      await fx.advance(5_000)
      expect(fx.engine.verdict('p')).to.deep.include({state: 'marked', stateSince: at(GRACE + 1_000)})
    })

    it('a pool confirming again after a retry is confirming since that attempt, and still confirming while blind', async () => {
      // kills 929:9 (both: the condition, and `confirming` → false), 904:9 (the condition → false), 904:34 (confirming → false)
      const fx = new LifecycleFixture(failsOnce(() => new Promise<Lease | undefined>(() => {})))
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE + 1_000)
      await fx.advance(2_000)
      expect(fx.engine.verdict('p')).to.deep.include({state: 'confirming', stateSince: at(GRACE + 1_000)})
      fx.engine.setViewWhole(false)
      expect(fx.engine.verdict('p')).to.deep.include({state: 'confirming'}).and.not.have.property('hold')
    })

    it('a pool writing again after a retry is writing since that attempt, and still writing while blind', async () => {
      // kills 929:43 (writing → false), 905:9 (writing or sent → false)
      const fx = new LifecycleFixture(failsOnce())
      heldWrites(fx)
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE + 1_000)
      await fx.advance(2_000)
      expect(fx.engine.verdict('p')).to.deep.include({state: 'writing', stateSince: at(GRACE + 1_000)})
      fx.engine.setViewWhole(false)
      expect(fx.engine.verdict('p')).to.deep.include({state: 'writing'}).and.not.have.property('hold')
    })

    it('a pool in the breaker’s hold window is held since its deadline', async () => {
      // kills 924:36 (wallNow + (evidenceNow - at)), 930:9 (blind with a blind time → true: no blind time, no date)
      const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy('1'), breakerHoldMs: 1_000})
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE + 500)
      expect(fx.engine.verdict('p')).to.deep.include({state: 'held', hold: 'breaker-window', stateSince: at(GRACE)})
    })

    it('a pool the breaker holds is held since the breaker tripped, not since its deadline', async () => {
      // kills 931:9 (breaker → false: since fell back to the deadline)
      const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy('2')})
      fx.putPool('a', {ready: 'True'})
      fx.putPool('b', {ready: 'True'})
      await fx.advance(5_000)
      fx.putPool('c', {ready: 'True'})
      // a and b fall due at 50 s (held for the window), c at 55 s: three silent trips the breaker.
      await fx.advance(GRACE + 1_000)
      expect(fx.engine.breakerState.tripped).to.equal(true)
      expect(fx.engine.verdict('a')).to.deep.include({state: 'held', hold: 'breaker', stateSince: at(GRACE + 5_000)})
    })

    it('an unmarkable pool is unmarkable since its deadline, and stays unmarkable while blind', async () => {
      // kills 924:36 (wallNow + (evidenceNow - at)), 904:9 (`unmarkable` → false)
      const fx = new LifecycleFixture()
      fx.store.dropsConditions = true
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE + 10_000)
      expect(fx.unmarkable.map((u) => u.name)).to.deep.equal(['p'])
      expect(fx.engine.verdict('p')).to.deep.include({state: 'unmarkable', stateSince: at(GRACE)})
      fx.engine.setViewWhole(false)
      expect(fx.engine.verdict('p')).to.deep.include({state: 'unmarkable'}).and.not.have.property('hold')
    })

    it('a pool whose write of unknown outcome is being read back is settling, blind or not', async () => {
      // kills 904:59 (`settling` → false)
      const fx = new LifecycleFixture()
      const held = heldWrites(fx)
      fx.store.get = () => new Promise<Pool | undefined>(() => {})
      fx.putPool('p', {ready: 'True'})
      await fx.clock.advance(GRACE)
      held[0]!.fail(new Error('no answer within 5000 ms'))
      await fx.clock.advance(0)
      expect(fx.engine.verdict('p')).to.deep.include({state: 'settling'})
      fx.engine.setViewWhole(false)
      expect(fx.engine.verdict('p')).to.deep.include({state: 'settling'}).and.not.have.property('hold')
    })
  })

  describe('what a write’s end settles', () => {
    it('a write the API refused is no mark, though the watch showed our mark while it was out; nothing is read back', async () => {
      // kills 729:23 (true; sent || !answered), 731:37 (true; sent || !answered)
      const {fx, held} = await markOut()
      held[0]!.land()
      fx.deliver('p')
      held[0]!.fail(new ForbiddenError('denied by a webhook'))
      await fx.clock.advance(0)
      expect(fx.marks).to.deep.equal([])
      expect(fx.store.script.calls('get'), 'no read back').to.equal(0)
    })

    it('a write whose answer is lost, sighted by the watch, is a mark without a read back', async () => {
      // kills 731:11 (sighted !== undefined → false: read back all the same)
      const {fx, held} = await markOut()
      held[0]!.land()
      fx.deliver('p')
      held[0]!.fail(new Error('no answer within 5000 ms'))
      await fx.clock.advance(0)
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
      expect(fx.store.script.calls('get'), 'no read back').to.equal(0)
    })

    it('a read back finds our mark behind another condition listed first', async () => {
      // kills 801:56 and 811:56 (the Ready condition → the first condition)
      const fx = new LifecycleFixture()
      const held = heldWrites(fx)
      const other: PoolCondition = {type: 'Scheduled', status: 'True', reason: 'Placed', message: 'ok', lastTransitionTime: '2025-12-31T00:00:00Z'}
      fx.putPool('p', {ready: 'True', extra: [other]})
      await fx.clock.advance(GRACE)
      held[0]!.land()
      held[0]!.fail(new Error('no answer within 5000 ms'))
      await fx.clock.advance(0)
      expect(fx.store.script.calls('get')).to.equal(1)
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
    })

    it('a read back that finds an Unknown of another reason is not our mark', async () => {
      // kills 802:43 (the reason → true)
      const {fx, held} = await markOut()
      // Another writer's Unknown, without a lastTransitionTime, lands instead of ours (the watch has not shown it).
      const pool = fx.store.peek('p')!
      fx.store.put({...pool, status: {...pool.status, conditions: [{type: 'Ready', status: 'Unknown', reason: 'NodeLost', message: 'gone'}]}})
      held[0]!.fail(new Error('no answer within 5000 ms'))
      await fx.clock.advance(0)
      expect(fx.store.script.calls('get')).to.equal(1)
      expect(fx.marks).to.deep.equal([])
    })

    it('a read back goes ahead of requests that are not urgent', async () => {
      // kills 786:9 ({} for {urgent: true}), 786:18 (urgent: false)
      const gate = gatedLimiter()
      const fx = new LifecycleFixture({makeLimiter: gate.makeLimiter})
      const held = heldWrites(fx)
      const order: string[] = []
      fx.store.script.beforeCall('get', 1, () => order.push('read back'))
      fx.putPool('p', {ready: 'True'})
      await fx.clock.advance(GRACE)
      expect(held).to.have.length(1)
      // Behind the write in the one slot: the gate (urgent), then another request (not urgent).
      gate.hold()
      void gate.limiter().run(() => {
        order.push('other')
        return Promise.resolve()
      })
      held[0]!.fail(new Error('no answer within 5000 ms'))
      await fx.clock.advance(0)
      gate.release()
      await fx.clock.advance(0)
      expect(order).to.deep.equal(['read back', 'other'])
    })

    it('a mark answered as written is settled: a renewal after it reads nothing back', async () => {
      // kills 817:25 (unsettled = false → true)
      const fx = new LifecycleFixture()
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE)
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
      fx.renew('p', 'r1')
      await fx.advance(30_000)
      expect(fx.store.script.calls('get'), 'no read back').to.equal(0)
    })

    it('a mark that lands after the pool progressed is reported, not absorbed: the record keeps what the watch showed', async () => {
      // kills 825:9 (recordOwnWrite only while still overdue → true)
      const {fx, held} = await markOut()
      fx.renew('p', 'r1')
      held[0]!.answer(held[0]!.land())
      await fx.clock.advance(0)
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
      expect(fx.engine.record('p')?.readyStatus).to.equal('True')
    })

    it('a successful write is an answer for the sight', async () => {
      // kills 747:9 (sent → false)
      const requests: boolean[] = []
      const fx = new LifecycleFixture({onRequest: (ok) => requests.push(ok)})
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE)
      expect(fx.marks).to.have.length(1)
      expect(requests, 'the confirming read, then the write').to.deep.equal([true, true])
    })

    it('a write that fails unanswered is told to the sight with what failed', async () => {
      // kills 727:48 (the detail → ``)
      const requests: Array<[boolean, string | undefined]> = []
      const fx = new LifecycleFixture({onRequest: (ok, detail) => requests.push([ok, detail])})
      fx.store.script.failNext('writeConditions', () => new Error('connection reset'))
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE)
      expect(requests).to.deep.include([false, 'writing Ready=Unknown to machinepool p: connection reset'])
    })

    it('a failed confirming read is not a failed write', async () => {
      // kills 875:9 (wasWrite → true)
      const fx = new LifecycleFixture(failsOnce())
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE + 1_000)
      expect(fx.marks).to.have.length(1)
      expect(fx.writeFailures).to.deep.equal([])
    })
  })

  describe('what decide() declines when the write’s turn comes', () => {
    it('a pool turned Unknown by another writer (not yet seen by the watch) is not written over', async () => {
      // kills 842:9 (Ready=Unknown → false)
      const fx: LifecycleFixture = new LifecycleFixture({
        confirmLease: () => {
          const pool = fx.store.peek('p')!
          fx.store.put({...pool, status: {...pool.status, conditions: [{type: 'Ready', status: 'Unknown', reason: 'NodeLost', message: 'gone'}]}})
          return Promise.resolve(undefined)
        },
      })
      fx.putPool('p', {ready: 'True'})
      await fx.clock.advance(GRACE)
      expect(fx.writes).to.equal(0)
      expect(fx.ready('p')).to.deep.include({reason: 'NodeLost'})
    })

    it('a pool the sight stops vouching for while its write waits its turn is not written', async () => {
      // kills 837:9 (the guard → false)
      let judge = true
      const gate = gatedLimiter()
      const fx = new LifecycleFixture({makeLimiter: gate.makeLimiter, canJudge: () => judge, confirmLease: () => (gate.hold(), Promise.resolve(undefined))})
      fx.putPool('p', {ready: 'True'})
      await fx.clock.advance(GRACE)
      expect(gate.limiter().queued, 'the write waits its turn').to.equal(1)
      judge = false
      gate.release()
      await fx.clock.advance(0)
      expect(fx.writes).to.equal(0)
    })

    it('a write declined before it left is no answer for the sight: only the confirming read is', async () => {
      // A write decided on the cached pool sends nothing; counted as an answer it would dilute the
      // failures that make the sight blind (was: every write whose turn came, sent or not).
      let judge = true
      const requests: boolean[] = []
      const gate = gatedLimiter()
      const fx = new LifecycleFixture({makeLimiter: gate.makeLimiter, canJudge: () => judge, onRequest: (ok) => requests.push(ok), confirmLease: () => (gate.hold(), Promise.resolve(undefined))})
      fx.putPool('p', {ready: 'True'})
      await fx.clock.advance(GRACE)
      judge = false
      gate.release()
      await fx.clock.advance(0)
      expect(fx.writes).to.equal(0)
      expect(requests, 'the confirming read alone').to.deep.equal([true])
    })

    it('a pool that the breaker holds by the time its write’s turn comes is not written, and no look is armed for it', async () => {
      // kills 837:9 (heldByBreaker && !tracker.has), 863:9 (heldByBreaker → false)
      const gate = gatedLimiter()
      let confirms = 0
      const fx = new LifecycleFixture({
        maxUnhealthy: parseMaxUnhealthy('1'),
        breakerHoldMs: 1_000,
        makeLimiter: gate.makeLimiter,
        confirmLease: () => {
          if (++confirms === 1) gate.hold()
          return Promise.resolve(undefined)
        },
      })
      fx.putPool('a', {ready: 'True'})
      await fx.advance(2_000)
      fx.putPool('b', {ready: 'True'})
      // a falls due at 50 s, is judged at 51 s: its write waits its turn. b falls due at 52 s: two silent trip it.
      await fx.clock.advance(GRACE + 1_000)
      expect(confirms).to.equal(1)
      expect(fx.engine.breakerState.tripped).to.equal(true)
      gate.release()
      await fx.clock.advance(0)
      expect(fx.writes).to.equal(0)
      expect(fx.engine.nextLook('a'), 'the breaker’s recovery restarts it').to.equal(undefined)
      expect(fx.engine.verdict('a')).to.deep.include({state: 'held', hold: 'breaker'})
    })

    it('a pool forgotten while its write waits its turn is not written, not tracked again, and no look is armed for it', async () => {
      // kills 837:9 (heldByBreaker && !tracker.has), 862:9 (all three: → false; && has; !active && …), 862:25 (overdue replaced → false)
      const gate = gatedLimiter()
      const fx = new LifecycleFixture({makeLimiter: gate.makeLimiter, confirmLease: () => (gate.hold(), Promise.resolve(undefined))})
      fx.putPool('p', {ready: 'True'})
      await fx.clock.advance(GRACE)
      // The watch says it is gone (the cache the write reads still holds it).
      fx.engine.poolDeleted('p')
      gate.release()
      await fx.clock.advance(0)
      expect(fx.writes).to.equal(0)
      expect(fx.engine.trackedPools).to.equal(0)
      expect(fx.engine.nextLook('p')).to.equal(undefined)
    })

    it('a pool whose deadline a spell seen late moved back while its write waited is not written yet', async () => {
      // kills 841:9 (grace check → false; monotonic() + lastChange)
      const gate = gatedLimiter()
      const fx = new LifecycleFixture({makeLimiter: gate.makeLimiter, confirmLease: () => (gate.hold(), Promise.resolve(undefined))})
      await fx.clock.advance(10_000)
      fx.putPool('p', {ready: 'True'})
      await fx.clock.advance(GRACE + 500)
      expect(gate.limiter().queued, 'the write waits its turn').to.equal(1)
      // Blind as of 5 s ago, seen now: the evidence clock steps back before p's deadline.
      fx.engine.setViewWhole(false, {sinceMs: 5_000, lost: false})
      fx.engine.setViewWhole(true)
      gate.release()
      await fx.clock.advance(0)
      expect(fx.writes).to.equal(0)
    })
  })

  describe('what a write that ends after the pool moved on leaves armed', () => {
    it('an unmarkable answer after the pool progressed leaves its next look at its new grace deadline', async () => {
      // kills 758:11 (true; this.active || …), 758:26 (overdue replaced → true)
      const {fx, held} = await markOut()
      fx.renew('p', 'r1')
      // The server answers without the condition (it dropped it): not held.
      held[0]!.answer(fx.store.peek('p')!)
      await fx.clock.advance(0)
      expect(fx.unmarkable.map((u) => u.name)).to.deep.equal(['p'])
      expect(fx.engine.nextLook('p')).to.equal(2 * GRACE)
      await fx.clock.advance(GRACE)
      expect(held, 'looked at again one grace period after its renewal').to.have.length(2)
    })

    it('a failed write after the pool progressed: no WriteRetrying Event, and its next look stays at its new grace deadline', async () => {
      // kills 878:89 (overdue still current → true), 882:9 (true; this.active || …), 882:24 (overdue still current → true)
      const {fx, held} = await markOut()
      held[0]!.fail(new ForbiddenError('denied by a webhook'))
      await fx.clock.advance(1_000)
      expect(held, 'the second attempt').to.have.length(2)
      fx.renew('p', 'r1')
      held[1]!.fail(new ForbiddenError('denied by a webhook'))
      await fx.clock.advance(0)
      expect(fx.events.events.map((e) => e.reason)).to.deep.equal([])
      expect(fx.engine.nextLook('p')).to.equal(2 * GRACE + 1_000)
    })
  })
})
