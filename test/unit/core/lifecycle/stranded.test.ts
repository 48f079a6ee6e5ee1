/**
 * No pool can be stranded (issue 26, item 4): an overdue pool whose attempt ended without a verdict
 * has a next look. The review's case: a blind spell begins while Unknown writes wait in the limiter;
 * each write is declined at its turn, and nothing looked at those pools again.
 */
import {expect} from 'chai'
import {RejectedError} from '../../../../src/core/errors.ts'
import {RequestLimiter} from '../../../../src/core/lifecycle/request-limiter.ts'
import type {PoolLifecycle} from '../../../../src/core/lifecycle/pool-lifecycle.ts'
import {GRACE, LifecycleFixture} from '../../../support/lifecycle-fixture.ts'

/** A limiter that turns the view blind the first time a write (urgent) reaches it, as a spell that begins while writes wait. */
class BlindingLimiter extends RequestLimiter {
  engine: PoolLifecycle | undefined
  spells = 0
  override run<T>(call: () => Promise<T>, options: {urgent?: boolean; signal?: AbortSignal} = {}): Promise<T> {
    if (options.urgent === true && this.spells === 0) {
      this.spells++
      this.engine?.setViewWhole(false)
    }
    return super.run(call, options)
  }
}

describe('controller lifecycle: no pool is stranded', () => {
  it('a write declined because the view turned blind while it waited is looked at again when whole, and the pool is marked', async () => {
    let limiter: BlindingLimiter | undefined
    const wired = new LifecycleFixture({makeLimiter: (clock) => (limiter = new BlindingLimiter(clock))})
    if (limiter === undefined) throw new Error('the fixture made no limiter')
    limiter.engine = wired.engine
    wired.putPool('p', {ready: 'True'})
    await wired.advance(GRACE)
    // The write reached the limiter blind: declined, nothing written.
    expect(limiter.spells).to.equal(1)
    expect(wired.writes).to.equal(0)
    expect(wired.engine.overdueStats().pools).to.equal(1)
    await wired.advance(10 * GRACE)
    expect(wired.writes, 'nothing is written while blind').to.equal(0)
    wired.engine.setViewWhole(true)
    await wired.advance(0)
    expect(wired.marks.map((m) => m.name)).to.deep.equal(['p'])
    expect(wired.ready('p')?.status).to.equal('Unknown')
  })

  it('a pool whose confirming read is out is not stranded: its step is in flight, with its request', async () => {
    let answer: (() => void) | undefined
    const fx = new LifecycleFixture({
      confirmLease: (name) => new Promise((resolve) => (answer = () => resolve(fx.apiLeases.get(name)))),
    })
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE)
    expect(answer, 'the confirming read went out').to.not.equal(undefined)
    expect(fx.engine.verdict('p')?.state).to.equal('confirming')
    expect(fx.engine.nextLook('p'), 'no look is armed while the read is out').to.equal(undefined)
    expect(fx.engine.strandedPools()).to.deep.equal([])
    answer?.()
    await fx.advance(0)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
    expect(fx.engine.strandedPools()).to.deep.equal([])
  })

  it('a write declined because the sight said no at its turn (the view still whole) is retried after the base delay', async () => {
    let calls = 0
    let refuseAt = 0
    const fx = new LifecycleFixture({canJudge: () => ++calls !== refuseAt, retryBaseMs: 1_000})
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE - 1)
    // The judgements before a write: the deadline's, mark()'s, after the confirming read, then decide()'s.
    refuseAt = calls + 4
    await fx.advance(1)
    expect(fx.writes).to.equal(0)
    expect(fx.engine.nextLook('p'), 'a next look is armed').to.equal(fx.clock.monotonic() + 1_000)
    await fx.advance(1_000)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
  })
  it('an unmarkable pool (the API answers the write and drops the mark) is reported once and tried again after the long backoff; marked once the cause is gone', async () => {
    const fx = new LifecycleFixture({unmarkableRetryMs: 30_000})
    fx.store.dropsConditions = true
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE)
    expect(fx.writes, 'the write went out').to.equal(1)
    expect(fx.unmarkable.map((u) => [u.name, u.reason])).to.deep.equal([['p', 'not-held']])
    expect(fx.engine.verdict('p')?.state).to.equal('unmarkable')
    expect(fx.engine.nextLook('p'), 'its next look: the long backoff').to.equal(fx.clock.monotonic() + 30_000)
    expect(fx.engine.strandedPools()).to.deep.equal([])
    await fx.advance(30_000)
    expect(fx.writes, 'tried again after the backoff').to.equal(2)
    expect(fx.unmarkable, 'reported only the first time').to.have.length(1)
    // The webhook removed: the next try holds.
    fx.store.dropsConditions = false
    await fx.advance(30_000)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
    expect(fx.ready('p')?.status).to.equal('Unknown')
  })
})

describe('controller lifecycle: a mark that landed unanswered is reported once', () => {
  /**
   * The store applies the write and then the answer is lost (a reset after the API applied it); the
   * watch lags and shows nothing meanwhile (the tests move the clock alone: fx.clock.advance). A mark
   * the watch shows while its write is out is reported by that sighting (live-verdicts.test.ts).
   * `hold` keeps the answer back until released.
   */
  function landsUnanswered(fx: LifecycleFixture, hold = false): {release: () => void} {
    const write = fx.store.writeConditions.bind(fx.store)
    let release = () => {}
    let first = true
    fx.store.writeConditions = async (...args: Parameters<typeof write>) => {
      const written = await write(...args)
      if (!first) return written
      first = false
      if (hold) await new Promise<void>((resolve) => (release = resolve))
      throw new Error('connection reset by peer (after the request was sent)')
    }
    return {release: () => release()}
  }

  it('its settling read lost too: the watch lagging: read back again at the retry, reported once (the simulator: loss seed 3504)', async () => {
    const fx = new LifecycleFixture({retryBaseMs: 1_000, retryMaxMs: 1_000})
    fx.putPool('p', {ready: 'True'})
    landsUnanswered(fx)
    fx.store.script.failNext('get', () => new Error('connection reset by peer'), 1)
    await fx.clock.advance(GRACE)
    expect(fx.ready('p')?.status, 'the mark landed').to.equal('Unknown')
    expect(fx.marks, 'not known yet').to.deep.equal([])
    expect(fx.engine.strandedPools()).to.deep.equal([])
    await fx.clock.advance(1_000)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
    expect(fx.events.events.filter((e) => e.reason === fx.kind.unknownReason).length, 'Evented once').to.equal(1)
    expect(fx.writes, 'no second write').to.equal(1)
    await fx.clock.advance(10_000)
    expect(fx.marks).to.have.length(1)
  })

  it("leadership lost during the retry's backoff after its settling read was lost: read back alone and reported once (loss seed 116441)", async () => {
    const fx = new LifecycleFixture({retryBaseMs: 1_000, retryMaxMs: 1_000})
    fx.putPool('p', {ready: 'True'})
    landsUnanswered(fx)
    fx.store.script.failNext('get', () => new Error('connection reset by peer'), 1)
    await fx.clock.advance(GRACE)
    expect(fx.ready('p')?.status).to.equal('Unknown')
    expect(fx.marks).to.deep.equal([])
    fx.engine.setLeader(false)
    await fx.clock.advance(1_000)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
    await fx.clock.advance(20_000)
    expect(fx.marks).to.have.length(1)
  })

  it('leadership lost while it was out, its settling read lost: read back alone, not leading, and reported once (loss seed 3541)', async () => {
    const fx = new LifecycleFixture({retryBaseMs: 1_000, retryMaxMs: 1_000})
    fx.putPool('p', {ready: 'True'})
    const answer = landsUnanswered(fx, true)
    fx.store.script.failNext('get', () => new Error('connection reset by peer'), 2)
    await fx.clock.advance(GRACE)
    expect(fx.ready('p')?.status).to.equal('Unknown')
    fx.engine.setLeader(false)
    answer.release()
    await fx.clock.advance(0)
    expect(fx.marks).to.deep.equal([])
    // Read back after the backoff (the first read back fails as well), then known.
    await fx.clock.advance(1_000)
    expect(fx.marks).to.deep.equal([])
    await fx.clock.advance(1_000)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
    await fx.clock.advance(20_000)
    expect(fx.marks).to.have.length(1)
  })
})

describe("controller lifecycle: one pool's trouble stays that pool's", () => {
  it('a pool whose writes fail again and again (a webhook that answers 500) is told to the sight once, and is retried', async () => {
    const told: boolean[] = []
    const fx = new LifecycleFixture({onRequest: (ok) => told.push(ok), retryBaseMs: 1_000, retryMaxMs: 1_000})
    fx.putPool('bad', {ready: 'True'})
    fx.store.script.failNext('writeConditions', () => new Error('update machinepools/status bad: HTTP 500: Internal error occurred: failed calling webhook'), 6)
    await fx.advance(GRACE)
    await fx.advance(6_000)
    // Six confirms answered, six writes failed: the failures count once.
    expect(fx.writes).to.equal(7)
    expect(told.filter((ok) => !ok)).to.have.length(1)
    expect(told.filter((ok) => ok).length).to.be.at.least(6)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['bad'])
  })

  it('a write the API refuses (422 Invalid) is an answer for the sight, not a failure', async () => {
    const told: boolean[] = []
    const fx = new LifecycleFixture({onRequest: (ok) => told.push(ok), retryBaseMs: 1_000, retryMaxMs: 1_000})
    fx.putPool('p', {ready: 'True'})
    fx.store.script.failNext('writeConditions', () => new RejectedError('update machinepools/status p: HTTP 422: Invalid value', 422), 3)
    await fx.advance(GRACE)
    await fx.advance(3_000)
    expect(told).to.not.include(false)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
  })
})
