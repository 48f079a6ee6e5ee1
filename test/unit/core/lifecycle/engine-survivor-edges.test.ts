/**
 * The engine at the edges its whole mutation run left untested: a leader whose view was never whole
 * keeps no timer, a look put off by the sight is taken as soon as the view is whole again, another's
 * Unknown seen while our write waits its turn is no sighting of ours, a breaker's recovery leaves a
 * write in flight (sent, or being read back) its overdue spell, a new attempt started the instant a
 * read back ends stays tracked, and a renewal forgets a write of an old era found not to have landed.
 */
import {expect} from 'chai'
import {parseMaxUnhealthy} from '../../../../src/core/lifecycle/mass-silence/max-unhealthy.ts'
import type {Lease, Pool, PoolCondition} from '../../../../src/core/types.ts'
import {GRACE, LifecycleFixture, drainAround, gatedLimiter, heldWrites, markOut, renewUntil} from '../../../support/lifecycle-fixture.ts'

/** Another replica's Unknown on p (the kind's reason, its own lastTransitionTime), as the watch delivers it. */
function theirMark(fx: LifecycleFixture): void {
  const pool = fx.store.peek('p')!
  const theirs: PoolCondition = {type: 'Ready', status: 'Unknown', reason: 'MachinePoolStatusUnknown', message: 'machinepoollet stopped posting machine pool status.', lastTransitionTime: '2026-01-01T00:00:49Z', observedGeneration: 1}
  fx.store.put({...pool, status: {...pool.status, conditions: [theirs]}})
  fx.deliver('p')
}


/** --max-unhealthy 2 with a window of ten grace periods and a hold of 1 s. */
const BREAKER = {maxUnhealthy: parseMaxUnhealthy('2'), breakerWindowMs: 10 * GRACE, breakerHoldMs: 1_000}

/**
 * m falls silent at 50 s and its write goes out (held); a, b and c fall silent at 110 s and trip the
 * breaker (d renews throughout). `atTrip` runs then; then b and c come back and the breaker recovers.
 */
async function recoveryWithWriteOut(fx: LifecycleFixture, atTrip: (held: ReturnType<typeof heldWrites>) => void = () => {}) {
  const held = heldWrites(fx)
  for (const name of ['m', 'a', 'b', 'c', 'd']) fx.putPool(name, {ready: 'True'})
  await renewUntil(fx, ['a', 'b', 'c', 'd'], 60_000)
  expect(held, 'm’s write is out').to.have.length(1)
  await renewUntil(fx, ['d'], 110_000)
  expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped'])
  atTrip(held)
  await fx.clock.advance(0)
  fx.renew('b', 'back')
  fx.renew('c', 'back')
  expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped', 'recovered'])
  return held
}

describe('controller lifecycle: the survivors’ edges', () => {
  it('a leader whose view has never been whole arms no timer: its deadline queue waits for the view', async () => {
    // kills 172:5 (the constructor's deadlines.suspend() removed: the queue armed its timer while blind)
    const fx = new LifecycleFixture({active: false})
    fx.engine.setLeader(true)
    fx.putPool('p', {ready: 'True'})
    expect(fx.clock.pending).to.equal(0)
    await fx.clock.advance(3 * GRACE)
    expect(fx.clock.pending).to.equal(0)
    // Whole: the queue arms for p's deadline, a grace period on (blind time is no silence).
    fx.engine.setViewWhole(true)
    expect(fx.clock.pending).to.equal(1)
    await fx.advance(GRACE)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
  })

  it('a pool whose look the sight put off is looked at as soon as the view is whole again', async () => {
    // kills 425:19 (`overdue.step === 'due'` → false: the look stayed a retry's base after the spell)
    let judge = true
    let confirms = 0
    // The sight says no while the first confirming read is out: p is 'due' again, looked at 1 s later.
    const fx = new LifecycleFixture({
      canJudge: () => judge,
      confirmLease: () => {
        if (++confirms === 1) judge = false
        return Promise.resolve<Lease | undefined>(undefined)
      },
    })
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE)
    expect(confirms).to.equal(1)
    expect(fx.engine.nextLook('p'), 'put off by the retry base').to.equal(GRACE + 1_000)
    fx.engine.setViewWhole(false)
    await fx.advance(10_000)
    judge = true
    fx.engine.setViewWhole(true)
    expect(fx.engine.nextLook('p'), 'looked at now').to.equal(GRACE + 10_000)
    await fx.advance(0)
    expect(confirms).to.equal(2)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
  })

  it('another’s Unknown seen while our write waits its turn is no sighting of ours: the write’s lost answer is settled by the read back', async () => {
    // kills 217:14 (`&&` → `||`: the sighting taken while the write was still queued, and reported as our mark)
    const gate = gatedLimiter()
    const fx = new LifecycleFixture({makeLimiter: gate.makeLimiter, confirmLease: () => (gate.hold(), Promise.resolve(undefined))})
    const held = heldWrites(fx)
    fx.putPool('p', {ready: 'True'})
    await fx.clock.advance(GRACE)
    expect(gate.limiter().queued, 'the write waits its turn').to.equal(1)
    expect(fx.engine.verdict('p')).to.deep.include({state: 'writing'})
    // Another replica marks p, then someone removes the Ready condition: p is to be marked again.
    theirMark(fx)
    fx.putPool('p', {})
    gate.release()
    await fx.clock.advance(0)
    expect(held, 'our write is out').to.have.length(1)
    // It does not land, and its answer is lost: the read back finds no mark of ours.
    held[0]!.fail(new Error('no answer within 5000 ms'))
    await fx.clock.advance(0)
    expect(fx.store.script.calls('get')).to.equal(1)
    expect(fx.marks).to.deep.equal([])
    expect(fx.logger.at('error').map((e) => e.msg)).to.deep.equal(['writing Ready=Unknown failed'])
  })

  it('a breaker’s recovery leaves a pool whose write is out in its overdue spell: still writing, no new grace period', async () => {
    // kills 534:11 (`overdue.step === 'sent'` → false, and `sent || settling` → false: the pool restarted)
    const fx = new LifecycleFixture(BREAKER)
    const held = await recoveryWithWriteOut(fx)
    expect(fx.engine.verdict('m')).to.deep.include({state: 'writing'})
    expect(fx.engine.nextLook('m'), 'nothing armed: the write is out').to.equal(undefined)
    // The write lands and is answered: reported, and m stays marked.
    held[0]!.answer(held[0]!.land())
    await fx.advance(0)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['m'])
    expect(fx.engine.verdict('m')).to.deep.include({state: 'marked'})
  })

  it('a breaker’s recovery leaves a pool whose write is being read back in its overdue spell: still settling, no new grace period', async () => {
    // kills 534:38 (`overdue.step === 'settling'` → false: the pool restarted while its read back was out)
    const fx = new LifecycleFixture(BREAKER)
    let answerRead: (pool: Pool | undefined) => void = () => {}
    const held = await recoveryWithWriteOut(fx, (out) => {
      // m's write lands, its answer is lost, and the read back is out when b and c come back.
      fx.store.get = () => new Promise<Pool | undefined>((resolve) => (answerRead = resolve))
      out[0]!.fail(new Error('no answer within 5000 ms'))
    })
    expect(fx.engine.verdict('m')).to.deep.include({state: 'settling'})
    expect(fx.engine.nextLook('m'), 'nothing armed: the read back is out').to.equal(undefined)
    answerRead(held[0]!.land())
    await fx.advance(0)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['m'])
    expect(fx.engine.verdict('m')).to.deep.include({state: 'marked'})
  })

  it('a new attempt started the instant a read back ends stays tracked: not stranded, and drain() waits for it', async () => {
    // kills 632:13 (`this.attempts.get(overdue) === attempt` → true: the read back's end forgot the newer attempt)
    const {fx, held} = await markOut()
    // Another replica's Unknown is seen while our write is out; ours lands over it unseen, its answer
    // is lost and the read back fails: p is Unknown to the engine, our write unsettled, retried in 1 s.
    theirMark(fx)
    held[0]!.land()
    fx.store.script.failNext('get', () => new Error('no answer within 5000 ms'))
    held[0]!.fail(new Error('no answer within 5000 ms'))
    await fx.clock.advance(0)
    // At the retry the read back finds our mark. The watch delivers p without its Ready condition in
    // the microtask after the read back's end (as an event read from a stream in promise callbacks may
    // be): p is to be marked again, and a new attempt starts before the read back's bookkeeping.
    const record = fx.events.record.bind(fx.events)
    fx.events.record = (event) => {
      record(event)
      fx.events.record = record
      queueMicrotask(() => queueMicrotask(() => fx.putPool('p', {})))
    }
    await fx.clock.advance(1_000)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
    expect(held, 'the new attempt’s write is out').to.have.length(2)
    expect(fx.engine.strandedPools()).to.deep.equal([])
    expect(await drainAround(fx, held[1]!), 'drain() waits for the write out').to.deep.equal({before: false, after: true})
    expect(fx.marks.map((m) => m.name), 'the new mark reported').to.deep.equal(['p', 'p'])
  })

  it('a pool that renews after a write of its old era was read back and found not to have landed is read back no more', async () => {
    // kills 451:12 (progressed()'s `else this.unsettledMarks.delete(name)` removed) and 447:63 (`parked?.unsettled
    // === true` → true, which keeps the settled write parked too): the read back armed at the era's end read it again
    const {fx, held} = await markOut()
    // The first write does not land, its answer is lost and its read back fails: unknown outcome, retried in 1 s.
    fx.store.script.failNext('get', () => new Error('no answer within 5000 ms'))
    held[0]!.fail(new Error('no answer within 5000 ms'))
    await fx.clock.advance(1_000)
    expect(held, 'the retry’s write is out').to.have.length(2)
    // Leadership is lost while it is out: the write of unknown outcome gets a read back of its own, in 1 s.
    fx.engine.setLeader(false)
    held[1]!.fail(held[1]!.signal!.reason as Error)
    await fx.clock.advance(0)
    expect(fx.store.script.calls('get'), 'the aborted write read back: not landed').to.equal(2)
    // The poollet renews: nothing of ours is left to settle.
    fx.renew('p', 'alive')
    await fx.clock.advance(10_000)
    expect(fx.store.script.calls('get')).to.equal(2)
    expect(fx.marks).to.deep.equal([])
  })
})
