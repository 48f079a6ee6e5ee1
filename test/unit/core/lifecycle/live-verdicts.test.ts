/**
 * The second promise: no dead pool left Ready=True longer than a bound. A mark already sent is never
 * abandoned and is counted once, one pool's trouble is that pool's, a mass death goes out at a
 * bounded rate, and the breaker sees a partition whose deadlines spread over a heartbeat interval.
 * Production timings throughout (50 s grace, sightTimings(50_000)).
 */
import {expect} from 'chai'
import {kindEngine} from '../../../../src/core/lifecycle/kind-engine.ts'
import {RequestLimiter} from '../../../../src/core/lifecycle/request-limiter.ts'
import {Sight, sightTimings} from '../../../../src/core/lifecycle/sight/sight.ts'
import {FakeClock} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'
import {GRACE, LifecycleFixture, heldWrites, markOut} from '../../../support/lifecycle-fixture.ts'

/** Pool p fell due at GRACE and its Ready=Unknown write was sent, held by the test. */
async function poolDueWithItsWriteHeld() {
  const {fx, held} = await markOut()
  return {fx, held}
}

/**
 * The production wiring (kindEngine) of the fixture's kind on the test's clock and sight, its caches
 * synced and leading; the fixture's own engine stays inactive.
 */
function leadingEngine(fx: LifecycleFixture, clock: FakeClock, sight: Sight, options: Pick<Parameters<typeof kindEngine>[0], 'confirmLease'> & Partial<Parameters<typeof kindEngine>[0]>) {
  const engine = kindEngine({
    kind: fx.kind,
    clock,
    sight,
    caches: ['pools', 'leases'],
    store: fx.store,
    getPool: (name) => fx.store.peek(name),
    events: fx.events,
    logger: fx.logger,
    gracePeriodMs: GRACE,
    ...options,
  })
  const stop = new AbortController()
  void sight.run(stop.signal)
  engine.cacheState('pools', undefined)
  engine.cacheState('leases', undefined)
  engine.lifecycle.setLeader(true)
  return {engine, stop}
}

describe('controller lifecycle: live verdicts', () => {
  describe('a mark already sent', () => {
    it('a write in flight when the view turns blind finishes; its mark is logged, Evented and counted once', async () => {
      const fx = new LifecycleFixture()
      const held = heldWrites(fx)
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE)
      expect(held).to.have.length(1)
      fx.engine.setViewWhole(false)
      expect(held[0]!.signal?.aborted, 'blindness aborts nothing').to.be.false
      held[0]!.answer(held[0]!.land())
      await fx.advance(0)
      expect(fx.ready('p')?.status).to.equal('Unknown')
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
      expect(fx.events.events.map((e) => e.reason)).to.deep.equal(['MachinePoolStatusUnknown'])
      expect(fx.logger.at('info').filter((e) => e.msg === 'pool marked Ready=Unknown')).to.have.length(1)
      fx.engine.setViewWhole(true)
      await fx.advance(GRACE)
      expect(fx.marks).to.have.length(1)
    })

    it('a write that landed but whose answer was lost is settled by reading the pool back: one mark, no second write', async () => {
      const {fx, held} = await poolDueWithItsWriteHeld()
      held[0]!.land()
      held[0]!.fail(new Error('write tcp: connection reset by peer'))
      await fx.clock.advance(0)
      expect(fx.store.script.log).to.deep.equal(['get'])
      expect(fx.marks.map((m) => [m.name, m.retries])).to.deep.equal([['p', 0]])
      expect(fx.events.events).to.have.length(1)
      expect(fx.logger.at('error'), 'no failure: the mark landed').to.deep.equal([])
      await fx.advance(5 * GRACE)
      expect(held).to.have.length(1)
      expect(fx.marks).to.have.length(1)
    })

    it('when the settling read fails too, the watch settles it: one mark, counted when the pool is seen Unknown', async () => {
      const {fx, held} = await poolDueWithItsWriteHeld()
      fx.store.script.failNext('get', () => new Error('no answer within 5000 ms'))
      held[0]!.land()
      held[0]!.fail(new Error('no answer within 5000 ms'))
      await fx.clock.advance(0)
      expect(fx.marks).to.deep.equal([])
      expect(fx.engine.overdueStats().pools).to.equal(1)
      // The watch delivers the pool as the write left it.
      await fx.advance(0)
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
      await fx.advance(5 * GRACE)
      expect(held).to.have.length(1)
      expect(fx.marks).to.have.length(1)
      expect(fx.events.events).to.have.length(1)
    })

    it('a mark the watch shows while the settling read is out, which then fails too, is counted once', async () => {
      const fx = new LifecycleFixture()
      const held = heldWrites(fx)
      let settleRead: {fail: (error: Error) => void} | undefined
      fx.store.get = () => new Promise((_resolve, reject) => (settleRead = {fail: reject}))
      fx.putPool('p', {ready: 'True'})
      await fx.clock.advance(GRACE)
      held[0]!.land()
      held[0]!.fail(new Error('bad record mac'))
      await fx.clock.advance(0)
      expect(settleRead, 'the settling read is out').to.not.equal(undefined)
      // The watch delivers the pool as the write left it, while that read is still out.
      fx.deliver('p')
      settleRead!.fail(new Error('bad record mac'))
      await fx.advance(0)
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
      expect(fx.events.events.map((e) => e.reason)).to.deep.equal(['MachinePoolStatusUnknown'])
      await fx.advance(5 * GRACE)
      expect(held, 'no second write').to.have.length(1)
      expect(fx.marks).to.have.length(1)
      expect(fx.engine.overdueStats().pools).to.equal(0)
    })

    it('a mark the watch shows before the write is answered is counted once, when the answer comes (the watch cannot tell our mark from a previous leader\'s)', async () => {
      const {fx, held} = await poolDueWithItsWriteHeld()
      const landed = held[0]!.land()
      fx.deliver('p')
      expect(fx.marks, 'not on the watch').to.deep.equal([])
      held[0]!.answer(landed)
      await fx.advance(0)
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
      expect(fx.events.events).to.have.length(1)
      await fx.advance(5 * GRACE)
      expect(held, 'no second write').to.have.length(1)
    })

    it('a mark the watch shows before the write is answered, whose answer and settling read are then lost, is counted once, before the poollet renews (the simulator\'s seed 120492)', async () => {
      const {fx, held} = await poolDueWithItsWriteHeld()
      held[0]!.land()
      fx.deliver('p')
      fx.store.script.failNext('get', () => new Error('connection reset by peer'))
      held[0]!.fail(new Error('connection reset by peer'))
      await fx.clock.advance(0)
      expect(fx.marks.map((m) => m.name), 'the sighting is that it landed').to.deep.equal(['p'])
      // The poollet's renewal lands before any retry, and its Ready=True goes over the mark.
      fx.renew('p', '2026-01-01T00:01:00Z')
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE / 2)
      expect(held, 'no second write').to.have.length(1)
      expect(fx.marks).to.have.length(1)
      expect(fx.events.events.map((e) => e.reason)).to.deep.equal(['MachinePoolStatusUnknown'])
    })

    it('a mark whose answer and settling read were lost, unseen when the poollet renews, is counted once when the watch shows it', async () => {
      const {fx, held} = await poolDueWithItsWriteHeld()
      fx.store.script.failNext('get', () => new Error('no answer within 5000 ms'))
      held[0]!.land()
      held[0]!.fail(new Error('no answer within 5000 ms'))
      await fx.clock.advance(0)
      expect(fx.marks).to.deep.equal([])
      fx.renew('p', '2026-01-01T00:01:00Z')
      expect(fx.engine.overdueStats().pools, 'not overdue any more').to.equal(0)
      // The lagging watch delivers the pool as the write left it.
      fx.deliver('p')
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
      await fx.advance(GRACE / 2)
      expect(held, 'no second write').to.have.length(1)
      expect(fx.marks).to.have.length(1)
      expect(fx.events.events).to.have.length(1)
    })

    it('a write of unknown outcome that did not land, forgotten by a renewal, is read back and never counted', async () => {
      const {fx, held} = await poolDueWithItsWriteHeld()
      fx.store.script.failNext('get', () => new Error('no answer within 5000 ms'))
      held[0]!.fail(new Error('no answer within 5000 ms'))
      await fx.clock.advance(0)
      fx.renew('p', '2026-01-01T00:01:00Z')
      const reads = fx.store.script.calls('get')
      await fx.advance(GRACE / 2)
      expect(fx.store.script.calls('get'), 'read back once more, alone').to.equal(reads + 1)
      await fx.advance(GRACE / 2)
      expect(fx.store.script.calls('get'), 'and settled: no more reads').to.equal(reads + 1)
      expect(fx.marks).to.deep.equal([])
      expect(fx.events.events).to.deep.equal([])
    })

    for (const [what, forget] of [
      ['a spell seen late moves its deadline back into the future', (fx: LifecycleFixture) => (fx.engine.setViewWhole(false, {sinceMs: 10_000, lost: false}), fx.engine.setViewWhole(true))],
      ['a pause restarts every grace period', (fx: LifecycleFixture) => (fx.engine.setViewWhole(false), fx.engine.setViewWhole(true, {sinceMs: 0, lost: true}))],
    ] as const) {
      it(`a mark of unknown outcome is counted when the watch shows it, also after ${what}`, async () => {
        const {fx, held} = await poolDueWithItsWriteHeld()
        fx.store.script.failNext('get', () => new Error('bad record mac'))
        held[0]!.land()
        held[0]!.fail(new Error('bad record mac'))
        await fx.clock.advance(0)
        expect(fx.marks).to.deep.equal([])
        forget(fx)
        expect(fx.engine.overdueStats().pools, 'not overdue any more').to.equal(0)
        fx.deliver('p')
        expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
        expect(fx.events.events).to.have.length(1)
        await fx.advance(3 * GRACE)
        expect(held, 'no second write').to.have.length(1)
        expect(fx.marks).to.have.length(1)
      })

      it(`a mark of unknown outcome is counted when the watch shows it after the poollet's renewal, also after ${what}`, async () => {
        const {fx, held} = await poolDueWithItsWriteHeld()
        fx.store.script.failNext('get', () => new Error('bad record mac'))
        held[0]!.land()
        held[0]!.fail(new Error('bad record mac'))
        await fx.clock.advance(0)
        forget(fx)
        expect(fx.engine.overdueStats().pools, 'not overdue any more').to.equal(0)
        // The renewal comes before the pool's own event, which still carries our Unknown.
        fx.renew('p', '2026-01-01T00:01:00Z')
        expect(fx.marks).to.deep.equal([])
        fx.deliver('p')
        expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
        expect(fx.events.events).to.have.length(1)
        await fx.advance(3 * GRACE)
        expect(held, 'no second write').to.have.length(1)
        expect(fx.marks).to.have.length(1)
        expect(fx.events.events).to.have.length(1)
      })
    }

    it('a write aborted when leadership is lost that had landed all the same is counted once', async () => {
      const {fx, held} = await poolDueWithItsWriteHeld()
      held[0]!.land()
      fx.engine.setLeader(false)
      expect(held[0]!.signal?.aborted).to.be.true
      held[0]!.fail(held[0]!.signal!.reason as Error)
      await fx.clock.advance(0)
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
      expect(fx.events.events).to.have.length(1)
    })
  })

  describe('one pool’s trouble is that pool’s', () => {
    it('a confirming read that fails retries that pool alone; the others are marked on time', async () => {
      const fx = new LifecycleFixture()
      const reads = new Map<string, number>()
      fx.engine['options'].confirmLease = (name) => {
        reads.set(name, (reads.get(name) ?? 0) + 1)
        return name === 'flaky' && reads.get(name)! <= 2 ? Promise.reject(new Error('HTTP 500')) : Promise.resolve(undefined)
      }
      for (const name of ['a', 'flaky', 'b']) fx.putPool(name, {ready: 'True'})
      await fx.advance(GRACE)
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['a', 'b'])
      await fx.advance(1000 + 2000)
      expect(fx.marks.map((m) => [m.name, m.retries, m.delayMs])).to.deep.equal([['a', 0, 0], ['b', 0, 0], ['flaky', 2, 3000]])
    })
  })

  describe('bounded load', () => {
    it('a mass death of 1000 pools goes out at the limiter’s rate, never more than its cap in flight, and every pool is marked', async () => {
      const fx = new LifecycleFixture()
      // On the fixture's clock.
      fx.engine['options'].limiter = new RequestLimiter(fx.clock, {qps: 50, burst: 100, concurrency: 16})
      let inFlight = 0
      let most = 0
      const starts: number[] = []
      fx.engine['options'].confirmLease = () => {
        starts.push(fx.clock.monotonic())
        most = Math.max(most, ++inFlight)
        return new Promise((resolve) => fx.clock.setTimer(20, () => (inFlight--, resolve(undefined))))
      }
      for (let i = 0; i < 1000; i++) fx.putPool(`p${i}`, {ready: 'True'})
      await fx.advance(GRACE)
      for (let s = 0; s < 60 && fx.marks.length < 1000; s++) await fx.advance(1000)
      expect(fx.marks).to.have.length(1000)
      expect(most).to.equal(16)
      // 2000 requests (a read and a write each): the burst of 100, then 50 a second.
      const last = Math.max(...fx.marks.map((m) => m.delayMs))
      expect(last).to.be.within(37_000, 40_000)
      const firstSecond = starts.filter((t) => t < GRACE + 1000).length
      expect(firstSecond, 'reads in the first second: at most burst + qps').to.be.at.most(150)
    })
  })

  describe('the breaker sees a partition', () => {
    /** 100 pools renewing every intervalMs, each at its own phase; stopped(i) ends renewals at 60 s. */
    async function fleet(fx: LifecycleFixture, seconds: number, stopped: (i: number) => boolean, intervalMs = 10_000) {
      for (let i = 0; i < 100; i++) fx.putPool(`p${i}`, {ready: 'True'})
      const stepMs = intervalMs / 100
      for (let step = 0; step < (seconds * 1000) / stepMs; step++) {
        await fx.clock.advance(stepMs)
        const i = step % 100
        if ((step + 1) * stepMs <= 60_000 || !stopped(i)) fx.renew(`p${i}`, `r${step}`)
      }
      await fx.advance(0)
    }

    it('with --max-unhealthy=30% and every poollet cut off at once: 0 marks, breaker open, one report', async () => {
      const fx = new LifecycleFixture({maxUnhealthy: {kind: 'percent', percent: 30}})
      await fleet(fx, 60 + 3 * 50, () => true)
      expect(fx.marks).to.deep.equal([])
      expect(fx.writes).to.equal(0)
      expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped'])
      expect(fx.engine.breakerState.tripped).to.be.true
      expect(fx.engine.overdueStats().pools, 'held, and visible as overdue').to.equal(100)
    })

    it('with --max-unhealthy=30% and 10% dead: all of them marked, the breaker never trips', async () => {
      const fx = new LifecycleFixture({maxUnhealthy: {kind: 'percent', percent: 30}})
      await fleet(fx, 60 + 2 * 50, (i) => i % 10 === 0)
      expect(fx.marks.map((m) => m.name).sort()).to.deep.equal(['p0', 'p10', 'p20', 'p30', 'p40', 'p50', 'p60', 'p70', 'p80', 'p90'])
      expect(fx.breakers).to.deep.equal([])
      expect(Math.max(...fx.marks.map((m) => m.delayMs)), 'each held one window (10 s)').to.be.at.most(GRACE / 5 + 100)
    })

    it('poollets that renew slower than the hold (every 40 s): the pools marked early still count, and it trips at the limit', async () => {
      const fx = new LifecycleFixture({maxUnhealthy: {kind: 'percent', percent: 30}})
      await fleet(fx, 60 + 3 * 50, () => true, 40_000)
      expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped'])
      // Deadlines spread over 40 s: a quarter falls due within any hold, below the limit; the first few
      // judged are marked, until the window (marked ones included) holds more than 30 %.
      expect(fx.marks.length).to.be.within(1, 10)
    })

    it('pools that come back close it; the ones still silent get a fresh grace period and are marked when it ends', async () => {
      const fx = new LifecycleFixture({maxUnhealthy: {kind: 'percent', percent: 30}})
      await fleet(fx, 60 + 80, () => true)
      expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped'])
      for (let i = 0; i < 80; i++) fx.renew(`p${i}`, 'back')
      await fx.advance(0)
      expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped', 'recovered'])
      expect(fx.marks, 'not at once: they may be live pools whose renewal is seconds away').to.deep.equal([])
      // The 80 go on renewing every 10 s; the 20 stay silent.
      const renewFor = async (ms: number) => {
        for (let t = 0; t < ms; t += 1000) {
          await fx.advance(1000)
          const second = (fx.clock.monotonic() / 1000) % 10
          for (let i = second * 8; i < second * 8 + 8; i++) fx.renew(`p${i}`, `again${fx.clock.monotonic()}`)
        }
      }
      await renewFor(GRACE - 1000)
      expect(fx.marks).to.deep.equal([])
      // The grace period, the hold for newly silent pools (grace/5), then the confirms and writes.
      await renewFor(GRACE / 5 + 2000)
      expect(fx.marks.map((m) => m.name).sort()).to.deep.equal(Array.from({length: 20}, (_, i) => `p${80 + i}`).sort())
      expect(fx.breakers.map((b) => b.transition), 'the 20 % left are below the limit').to.deep.equal(['tripped', 'recovered'])
    })

    it('a partition that heals over a heartbeat interval marks none of the pools coming back', async () => {
      const fx = new LifecycleFixture({maxUnhealthy: {kind: 'percent', percent: 30}})
      await fleet(fx, 60 + 80, () => true)
      expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped'])
      // Each poollet renews at its own phase over the next 10 s: the breaker closes once 70 % are back,
      // while the rest are still a few seconds from their renewal.
      for (let round = 0; round < 20; round++) {
        for (let i = 0; i < 100; i++) {
          fx.renew(`p${i}`, `back${round}`)
          await fx.advance(100)
        }
        if (round === 0) expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped', 'recovered'])
      }
      expect(fx.marks, 'false Unknowns').to.deep.equal([])
      expect(fx.writes).to.equal(0)
    })
  })

  describe('what blindness costs (the production wiring)', () => {
    function wired() {
      const clock = new FakeClock()
      const sight = new Sight({clock, logger: new FakeLogger(), probe: () => Promise.resolve(), ...sightTimings(GRACE)})
      const fx = new LifecycleFixture({active: false})
      const {engine, stop} = leadingEngine(fx, clock, sight, {confirmLease: () => Promise.resolve(undefined)})
      engine.lifecycle.poolUpserted(fx.putPool('p', {ready: 'True'}))
      return {clock, engine, stop}
    }

    it('a watch that resumed from its resourceVersion lost nothing: the silence before the gap still counts', async () => {
      const {clock, engine, stop} = wired()
      await clock.advance(40_000)
      engine.cacheState('leases', 'watch-gap', 'reconnecting, for more than 3000 ms')
      await clock.advance(30_000)
      engine.cacheState('leases', undefined, 'watching')
      expect(engine.lifecycle.nextLook('p')).to.equal(clock.monotonic() + 10_000)
      stop.abort()
    })

    it('a cache that had to relist may have missed events: every grace period starts afresh', async () => {
      const {clock, engine, stop} = wired()
      await clock.advance(40_000)
      engine.cacheState('leases', 'watch-gap', 'relisting (gone), for more than 3000 ms')
      await clock.advance(30_000)
      engine.cacheState('leases', undefined, 'watching after a relist', true)
      expect(engine.lifecycle.nextLook('p')).to.equal(clock.monotonic() + GRACE)
      stop.abort()
    })

    it('a pause of this process may have hidden anything: every grace period starts afresh when a probe after it answers', async () => {
      const {clock, engine, stop} = wired()
      await clock.advance(40_000)
      await clock.jump(30_000)
      expect(engine.view.reason).to.equal(undefined)
      expect(engine.lifecycle.nextLook('p'), 'the probe due at the resume answered: whole, grace afresh').to.be.within(clock.monotonic() + GRACE - 5000, clock.monotonic() + GRACE)
      stop.abort()
    })

    it('a pool whose reads failed through an outage is looked at the moment the view is whole, not after the backoff the outage grew', async () => {
      const fx = new LifecycleFixture()
      let apiUp = false
      fx.engine['options'].confirmLease = () => (apiUp ? Promise.resolve(undefined) : Promise.reject(new Error('no answer within 5000 ms')))
      fx.putPool('p', {ready: 'True'})
      // Due at 50 s: reads fail at 50, 51, 53, 57 and 65 s; the next would be at 75 s.
      await fx.advance(GRACE + 16_000)
      expect(fx.engine.nextLook('p')).to.equal(GRACE + 25_000)
      fx.engine.setViewWhole(false)
      await fx.advance(34_000)
      apiUp = true
      fx.engine.setViewWhole(true)
      await fx.advance(0)
      expect(fx.marks.map((m) => [m.name, m.writtenAt - GRACE])).to.deep.equal([['p', 16_000]])
    })

    it('blind time does not age an overdue pool in the gauge', async () => {
      const fx = new LifecycleFixture()
      fx.store.script.failNext('writeConditions', () => new Error('no answer within 5000 ms'), 100)
      fx.store.script.failNext('get', () => new Error('no answer within 5000 ms'), 100)
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE + 3000)
      fx.engine.setViewWhole(false)
      await fx.advance(60_000)
      expect(fx.engine.overdueStats()).to.deep.equal({pools: 1, oldestMs: 3000})
    })
  })

  describe('the whole wiring, on a lossy API (production timings)', () => {
    it('5 % of probes and confirming reads fail at random: every dead pool marked within 2 × grace, no live pool marked', async () => {
      const clock = new FakeClock()
      let seed = 7
      const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
      const lossy = () => (random() < 0.05 ? Promise.reject(new Error('spoilt')) : Promise.resolve())
      const sight = new Sight({clock, logger: new FakeLogger(), probe: lossy, ...sightTimings(GRACE)})
      const fx = new LifecycleFixture({active: false})
      // The fixture's engine is replaced by the production wiring on the test's own clock.
      const {engine, stop} = leadingEngine(fx, clock, sight, {
        getLease: (name) => fx.leases.get(name),
        confirmLease: (name) => lossy().then(() => fx.apiLeases.get(name)),
        // Marks timed on the real (fake) clock: the report's own times leave blind spells out.
        observer: {marked: (r) => fx.marks.push({...r, writtenAt: clock.monotonic()})},
      })
      const names = Array.from({length: 200}, (_, i) => `p${i}`)
      const delivered = new Map<string, string | undefined>()
      const pool = (name: string) => {
        const stored = fx.store.peek(name)
        if (stored === undefined || delivered.get(name) === stored.metadata.resourceVersion) return
        delivered.set(name, stored.metadata.resourceVersion)
        engine.lifecycle.poolUpserted(stored)
      }
      for (const name of names) {
        fx.store.put({apiVersion: 'compute.ironcore.dev/v1alpha1', kind: 'MachinePool', metadata: {name, uid: name, generation: 1}, status: {conditions: [{type: 'Ready', status: 'True', reason: 'HeartbeatReceived', message: 'ok', observedGeneration: 1}]}})
        pool(name)
      }
      const renew = (name: string, at: number) => {
        const lease = {name, namespace: fx.kind.leaseNamespace, spec: {holderIdentity: `${name}_x`, renewTime: String(at)}}
        fx.leases.set(name, lease)
        fx.apiLeases.set(name, lease)
        engine.lifecycle.leaseUpserted(lease)
      }
      // Every pool renews every 10 s at its phase; the even ones die at 60 s.
      let deathAt = 0
      for (let step = 0; step < 10 * (60 + 2 * 50); step++) {
        await clock.advance(100)
        const now = clock.monotonic()
        if (now === 60_000) deathAt = now
        for (let i = step % 100; i < 200; i += 100) {
          if (i % 2 === 0 && now > 60_000) continue
          renew(`p${i}`, now)
        }
        for (const name of names) pool(name)
      }
      const marked = new Set(fx.marks.map((m) => m.name))
      expect([...marked].filter((n) => Number(n.slice(1)) % 2 === 1), 'live pools marked').to.deep.equal([])
      expect(marked.size, 'dead pools marked').to.equal(100)
      const last = Math.max(...names.filter((n) => Number(n.slice(1)) % 2 === 0).map((n) => fx.marks.find((m) => m.name === n)!.writtenAt))
      expect(last - deathAt).to.be.at.most(2 * GRACE)
      stop.abort()
    })
  })
})
