/**
 * The engine at the last edges its mutation run left untested: a look put off by the sight while its
 * confirming read was out waits a retry's base and queues no write; a breaker that opened while the
 * read was out arms no look of its own; the dry run's would-mark takes an urgent turn in the limiter
 * and checks, after it, that the pool is still to be marked (or looks at it again); a failed LIST is
 * told to the sight once; a new attempt started the instant a mark is reported stays tracked; and a
 * write of unknown outcome whose era ended is read back later by one timer, not two.
 */
import {expect} from 'chai'
import {parseMaxUnhealthy} from '../../../../src/core/lifecycle/mass-silence/max-unhealthy.ts'
import type {ZoneTransition} from '../../../../src/core/lifecycle/mass-silence/zone-breakers.ts'
import {RequestLimiter} from '../../../../src/core/lifecycle/request-limiter.ts'
import type {Lease, Pool} from '../../../../src/core/types.ts'
import {GRACE, LifecycleFixture, drainAround, gatedLimiter, heldWrites, markOut, renewUntil} from '../../../support/lifecycle-fixture.ts'

/** The wall clock's reading `ms` after the fixture's start, as the record writes it. */
const at = (ms: number) => new Date(Date.parse('2026-01-01T00:00:00Z') + ms).toISOString()

/** --max-unhealthy 2 with a window of ten grace periods and a hold of 1 s. */
const BREAKER = {maxUnhealthy: parseMaxUnhealthy('2'), breakerWindowMs: 10 * GRACE, breakerHoldMs: 1_000}

describe('controller lifecycle: the last edges', () => {
  it('a look the sight put off while its confirming read was out is taken again a retry’s base later, not at once', async () => {
    // kills 674:63 (`monotonic() + retryBase` → `-`: the look armed in the past, taken again at once)
    // The sight says no once, to the check after the first confirming read, and vouches again after.
    let sayNo = false
    let confirms = 0
    const fx = new LifecycleFixture({
      canJudge: () => (sayNo ? (sayNo = false) : true),
      confirmLease: () => {
        if (++confirms === 1) sayNo = true
        return Promise.resolve<Lease | undefined>(undefined)
      },
    })
    fx.putPool('p', {ready: 'True'})
    await fx.clock.advance(GRACE)
    expect(confirms, 'not looked at again yet').to.equal(1)
    expect(fx.engine.nextLook('p'), 'put off by the retry base').to.equal(GRACE + 1_000)
    await fx.clock.advance(999)
    expect(confirms).to.equal(1)
    await fx.clock.advance(1)
    expect(confirms).to.equal(2)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
  })

  it('a look the sight put off while its confirming read was out queues no write: the pool is due, its next look armed', async () => {
    // kills 670:56 (the block emptied: the write queued though the sight said no)
    let judge = true
    const gate = gatedLimiter()
    const fx = new LifecycleFixture({
      makeLimiter: gate.makeLimiter,
      canJudge: () => judge,
      confirmLease: () => {
        judge = false
        gate.hold()
        return Promise.resolve<Lease | undefined>(undefined)
      },
    })
    fx.putPool('p', {ready: 'True'})
    await fx.clock.advance(GRACE)
    expect(gate.limiter().queued, 'no write waits its turn').to.equal(0)
    expect(fx.engine.nextLook('p')).to.equal(GRACE + 1_000)
    gate.release()
    await fx.clock.advance(0)
    expect(fx.writes).to.equal(0)
  })

  it('a breaker that opened while a confirming read was out arms no look for the pool it holds: its recovery decides', async () => {
    // kills 674:11 (`!this.heldByBreaker(name)` → true: a retry's look armed for a pool the breaker holds)
    let answer: (lease: Lease | undefined) => void = () => {}
    const fx = new LifecycleFixture({
      ...BREAKER,
      confirmTimeoutMs: 30_000,
      confirmLease: (name) => (name === 'm' ? new Promise<Lease | undefined>((resolve) => (answer = resolve)) : Promise.resolve(undefined)),
    })
    for (const name of ['m', 'a', 'b', 'c', 'd']) fx.putPool(name, {ready: 'True'})
    await fx.advance(5_000)
    for (const name of ['a', 'b', 'c', 'd']) fx.renew(name, 'r5')
    // m falls silent at 50 s, held a second, and its confirming read goes out at 51 s.
    await fx.advance(46_000)
    expect(fx.engine.verdict('m')).to.deep.include({state: 'confirming'})
    // a, b and c fall silent at 55 s: the breaker trips while m's read is out.
    await fx.advance(4_000)
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped'])
    answer(undefined)
    await fx.clock.advance(0)
    expect(fx.engine.nextLook('m'), 'held: no look of its own').to.equal(undefined)
    expect(fx.writes).to.equal(0)
  })

  it('the dry run’s would-mark waits its turn in the limiter as the write would', async () => {
    // kills 688:9 (the try emptied: the would-mark made without a turn in the limiter)
    const gate = gatedLimiter()
    const fx = new LifecycleFixture({dryRun: true, makeLimiter: gate.makeLimiter, confirmLease: () => (gate.hold(), Promise.resolve(undefined))})
    fx.putPool('p', {ready: 'True'})
    await fx.clock.advance(GRACE)
    expect(gate.limiter().queued, 'the would-write waits its turn').to.equal(1)
    expect(fx.wouldMarks).to.deep.equal([])
    gate.release()
    await fx.clock.advance(0)
    expect(fx.wouldMarks.map((m) => m.name)).to.deep.equal(['p'])
    expect(fx.writes).to.equal(0)
  })

  it('the dry run’s turn in the limiter is urgent, as the write’s: it goes before a request queued earlier that is not', async () => {
    // kills 689:63 (the options `{}`) and 689:72 (`urgent: false`): the would-mark waited behind the other request
    const gate = gatedLimiter()
    const seen: number[] = []
    const fx = new LifecycleFixture({
      dryRun: true,
      makeLimiter: gate.makeLimiter,
      confirmLease: () => {
        gate.hold()
        void gate.limiter().run(() => (seen.push(fx.wouldMarks.length), Promise.resolve()))
        return Promise.resolve(undefined)
      },
    })
    fx.putPool('p', {ready: 'True'})
    await fx.clock.advance(GRACE)
    expect(gate.limiter().queued).to.equal(2)
    gate.release()
    await fx.clock.advance(0)
    expect(seen, 'the other request ran after the would-mark').to.deep.equal([1])
  })

  it('the dry run makes no would-mark for a pool that renewed while it waited its turn', async () => {
    // kills 696:31 (`this.overdue.get(name) !== overdue` → false: the would-mark made for a live pool)
    const gate = gatedLimiter()
    const fx = new LifecycleFixture({dryRun: true, makeLimiter: gate.makeLimiter, confirmLease: () => (gate.hold(), Promise.resolve(undefined))})
    fx.putPool('p', {ready: 'True'})
    await fx.clock.advance(GRACE)
    expect(gate.limiter().queued).to.equal(1)
    fx.renew('p', 'back')
    gate.release()
    await fx.clock.advance(0)
    expect(fx.wouldMarks).to.deep.equal([])
    expect(fx.engine.nextLook('p'), 'a grace period from the renewal').to.equal(2 * GRACE)
  })

  it('the dry run’s would-mark that the sight refused while it waited its turn looks at the pool again a retry’s base later', async () => {
    // kills 697:7 (rearmOverdue() removed: the overdue pool left with no next look)
    const gate = gatedLimiter()
    let judge = true
    let confirms = 0
    // The first confirming read's would-write waits behind the held slot; later ones do not.
    const confirmLease = () => (++confirms === 1 && gate.hold(), Promise.resolve(undefined))
    const fx = new LifecycleFixture({dryRun: true, canJudge: () => judge, makeLimiter: gate.makeLimiter, confirmLease})
    fx.putPool('p', {ready: 'True'})
    await fx.clock.advance(GRACE)
    expect(gate.limiter().queued).to.equal(1)
    judge = false
    gate.release()
    await fx.clock.advance(0)
    expect(fx.wouldMarks).to.deep.equal([])
    expect(fx.engine.nextLook('p')).to.equal(GRACE + 1_000)
    judge = true
    await fx.clock.advance(1_000)
    expect(fx.wouldMarks.map((m) => m.name)).to.deep.equal(['p'])
  })

  it('a LIST made to confirm many silent pools that fails is told to the sight once, by the pool whose turn it was', async () => {
    // kills 647:11 (`!(error instanceof SharedFailure)` → true: every pool of the LIST told the sight its failure)
    let lists = 0
    const told: string[] = []
    const fx: LifecycleFixture = new LifecycleFixture({
      makeLimiter: (clock) => new RequestLimiter(clock, {qps: 1, burst: 1, concurrency: 1}),
      listLeases: () => {
        lists++
        return Promise.reject(new Error('connection reset'))
      },
      onRequest: (answered, detail) => {
        if (!answered) told.push(detail ?? '')
      },
    })
    for (let i = 0; i < 40; i++) fx.putPool(`p${i}`, {ready: 'True'})
    await fx.advance(GRACE)
    for (let i = 0; i < 60 && lists === 0; i++) await fx.advance(1_000)
    expect(lists).to.equal(1)
    expect(told).to.have.length(1)
    expect(told[0]).to.match(/^confirming the silence of machinepool p\d+: connection reset$/)
  })

  it('a new attempt started the instant a mark is reported stays tracked: drain() waits for its write', async () => {
    // kills 590:13 (`this.attempts.get(overdue) === attempt` → true: the first attempt's end forgot the newer one)
    const {fx, held} = await markOut()
    // The mark's Event is recorded; in the microtask after it the watch delivers p without its Ready
    // condition: p is to be marked again, and a new attempt starts before the first one's bookkeeping.
    const record = fx.events.record.bind(fx.events)
    fx.events.record = (event) => {
      record(event)
      fx.events.record = record
      queueMicrotask(() => void fx.putPool('p', {}))
    }
    held[0]!.answer(held[0]!.land())
    await fx.clock.advance(0)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
    expect(held, 'the new attempt’s write is out').to.have.length(2)
    expect(await drainAround(fx, held[1]!), 'drain() waits for the write out').to.deep.equal({before: false, after: true})
    expect(fx.marks.map((m) => m.name), 'the new mark reported').to.deep.equal(['p', 'p'])
  })

  it('a write of unknown outcome whose era ends while it is read back, the read failing, is read back later once, not twice', async () => {
    // kills 609:5 (`this.settlingLater.add(overdue)` removed: the era's end and the failed read each armed a read back)
    const fx = new LifecycleFixture()
    const held = heldWrites(fx)
    let gets = 0
    let failRead: (error: Error) => void = () => {}
    // The first read back hangs until failed; every later one fails at once.
    fx.store.get = () => (++gets === 1 ? new Promise<Pool | undefined>((_resolve, reject) => (failRead = reject)) : Promise.reject(new Error('connection reset')))
    fx.putPool('p', {ready: 'True'})
    await fx.clock.advance(GRACE)
    // The write's answer is lost: it is read back.
    held[0]!.fail(new Error('no answer within 5000 ms'))
    await fx.clock.advance(0)
    expect(gets, 'the read back is out').to.equal(1)
    // Leadership is lost while the read is out (its era's end arms a read back a second on), then the read fails.
    fx.engine.setLeader(false)
    failRead(new Error('connection reset'))
    await fx.clock.advance(0)
    await fx.clock.advance(1_000)
    expect(gets, 'one read back a second on').to.equal(2)
    await fx.clock.advance(2_000)
    expect(gets, 'the next one two seconds after it').to.equal(3)
    expect(fx.marks).to.deep.equal([])
  })

  it('a write of unknown outcome whose era ends while it is read back, the read finding it not landed, is read back no more', async () => {
    // The era's end armed a read back a second on; the read out found the pool without our mark: nothing is left to settle.
    const {fx, held} = await markOut()
    let gets = 0
    let answerRead: (pool: Pool | undefined) => void = () => {}
    fx.store.get = (name: string) => (++gets === 1 ? new Promise<Pool | undefined>((resolve) => (answerRead = resolve)) : Promise.resolve(fx.store.peek(name)))
    // The write does not land and its answer is lost: it is read back.
    held[0]!.fail(new Error('no answer within 5000 ms'))
    await fx.clock.advance(0)
    expect(gets, 'the read back is out').to.equal(1)
    fx.engine.setLeader(false)
    answerRead(fx.store.peek('p'))
    await fx.clock.advance(0)
    await fx.clock.advance(10_000)
    expect(gets, 'not read again').to.equal(1)
    expect(fx.marks).to.deep.equal([])
    expect(fx.engine['unsettledMarks'].has('p'), 'nothing of it kept').to.equal(false)
  })

  it('a pool its zone holds is held since its zone tripped; held by its zone and the fleet, since the earlier trip', async () => {
    // A zone-held pool's record said the fleet breaker's last trip, 1970 when it never tripped (mutant 515 showed it).
    // 50 %: zone a (4 pools) trips with 3 silent; the fleet (a's 4 and 8 pools of no zone) with 7.
    const fx = new LifecycleFixture({
      maxUnhealthy: parseMaxUnhealthy('50%'),
      zoneOf: (name) => (name.includes('-') ? name.split('-')[0] : undefined),
      breakerWindowMs: 10 * GRACE,
      breakerHoldMs: 5_000,
    })
    const zones: string[] = []
    fx.engine['options'].observer.zoneBreaker = (change: ZoneTransition) => zones.push(`${change.zone} ${change.transition}`)
    const solo = ['s0', 's1', 's2', 's3', 's4', 's5', 's6', 's7']
    for (const name of ['a-0', 'a-1', 'a-2', 'a-3', ...solo]) fx.putPool(name, {ready: 'True'})
    // a-0 falls silent at 50 s, a-1 at 52 s, a-2 at 54 s: zone a trips at 54 s, a-0 still in its hold window.
    await fx.advance(2_000)
    fx.renew('a-1', 'r1')
    await fx.advance(2_000)
    fx.renew('a-2', 'r1')
    await fx.advance(1_000)
    await renewUntil(fx, ['a-3', ...solo], 60_000)
    expect(zones).to.deep.equal(['a tripped'])
    expect(fx.breakers, 'the fleet').to.deep.equal([])
    expect(fx.engine.verdict('a-0')).to.deep.include({state: 'held', hold: 'breaker', stateSince: at(54_000)})
    // s0..s3 stop after 60 s: silent at 110 s, seven in the window trip the fleet.
    await renewUntil(fx, ['a-3', 's4', 's5', 's6', 's7'], 115_000)
    expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped'])
    expect(fx.engine.verdict('a-0'), 'the zone tripped first').to.deep.include({state: 'held', hold: 'breaker', stateSince: at(54_000)})
    expect(fx.engine.verdict('s0'), 'no zone: the fleet').to.deep.include({state: 'held', hold: 'breaker', stateSince: at(110_000)})
    expect(fx.marks).to.deep.equal([])
  })
})
