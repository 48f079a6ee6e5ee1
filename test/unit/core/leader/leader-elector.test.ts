import {expect} from 'chai'
import {getEventListeners} from 'node:events'
import {AlreadyExistsError, ConflictError} from '../../../../src/core/errors.ts'
import {LeaderElector} from '../../../../src/core/leader/leader-elector.ts'
import {LEADER_ELECTION_DEFAULTS, validateLeaderElection, type LeaderElectorOptions} from '../../../../src/core/leader/leader-options.ts'
import type {LeaderElectionResult} from '../../../../src/core/leader/leader-options.ts'
import type {LeaseStore} from '../../../../src/core/ports.ts'
import type {Lease} from '../../../../src/core/types.ts'
import {FakeClock, flushPromises} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'
import {FakeLeaseStore} from '../../../support/fake-stores.ts'

const NS = 'ironpool-system'
const NAME = 'ironpool-controller'
const ME = 'controller-a_1111'
const OTHER = 'controller-b_2222'
const START = Date.parse('2026-01-01T00:00:00.250Z')
const {leaseDurationMs: LEASE, renewDeadlineMs: RENEW, retryPeriodMs: RETRY} = LEADER_ELECTION_DEFAULTS
const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/

/** Wraps a store so that one replica can be cut off (calls fail) or left hanging (calls never answer). */
class Reachable implements LeaseStore {
  mode: 'up' | 'down' | 'hang' = 'up'
  private readonly inner: LeaseStore
  constructor(inner: LeaseStore) {
    this.inner = inner
  }
  get(name: string) {
    return this.call(() => this.inner.get(name))
  }
  create(lease: Lease) {
    return this.call(() => this.inner.create(lease))
  }
  update(lease: Lease) {
    return this.call(() => this.inner.update(lease))
  }
  private call<T>(fn: () => Promise<T>): Promise<T> {
    if (this.mode === 'hang') return new Promise<T>(() => {})
    if (this.mode === 'down') return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6443'))
    return fn()
  }
}

/** One replica: its elector, its run, and what its callbacks saw. */
class Replica {
  readonly controller = new AbortController()
  readonly elector: LeaderElector
  readonly newLeaders: string[] = []
  leading: AbortSignal | undefined
  startedAt: number | undefined
  stoppedLeading = 0
  result: LeaderElectionResult | undefined
  done: Promise<LeaderElectionResult> | undefined

  constructor(clock: FakeClock, store: LeaseStore, identity: string, extra: Partial<LeaderElectorOptions> = {}) {
    this.elector = new LeaderElector({
      store,
      clock,
      logger: new FakeLogger(),
      identity,
      name: NAME,
      namespace: NS,
      random: () => 0,
      onStartedLeading: (signal) => {
        this.leading = signal
        this.startedAt = clock.monotonic()
      },
      onStoppedLeading: () => this.stoppedLeading++,
      onNewLeader: (who) => this.newLeaders.push(who),
      ...extra,
    })
  }

  start(): this {
    this.done = this.elector.run(this.controller.signal)
    void this.done.then((result) => (this.result = result))
    return this
  }
}

function heldBy(holder: string, renewTime: string): Lease {
  return {name: NAME, namespace: NS, spec: {holderIdentity: holder, leaseDurationSeconds: 15, acquireTime: renewTime, renewTime, leaseTransitions: 3}}
}

describe('LeaderElector', () => {
  let clock: FakeClock
  let store: FakeLeaseStore
  beforeEach(() => {
    clock = new FakeClock(START)
    store = new FakeLeaseStore()
  })

  it('acquires a free Lease: holder, duration, acquireTime = renewTime in MicroTime, 0 transitions', async () => {
    const me = new Replica(clock, store, ME).start()
    await flushPromises()
    expect(store.peek(NAME)?.spec).to.deep.equal({
      holderIdentity: ME,
      leaseDurationSeconds: 15,
      acquireTime: '2026-01-01T00:00:00.250000Z',
      renewTime: '2026-01-01T00:00:00.250000Z',
      leaseTransitions: 0,
    })
    expect(store.peek(NAME)?.spec.renewTime).to.match(MICRO_TIME)
    expect(me.elector.isLeader).to.be.true
    expect(me.leading?.aborted).to.equal(false)
    expect(me.newLeaders).to.deep.equal([ME])
  })

  it('does not take a Lease whose holder keeps renewing it, however long it waits', async () => {
    store.put(heldBy(OTHER, '2026-01-01T00:00:00.000000Z'))
    const me = new Replica(clock, store, ME).start()
    store.script.forbid('create', 'update')
    for (let second = 1; second <= 60; second++) {
      await clock.advance(1000)
      // Another replica's renewal: only the change matters, so a renewTime from the past will do.
      if (second % 5 === 0) store.put(heldBy(OTHER, `2025-06-01T00:00:${String(second).padStart(2, '0')}.000000Z`))
    }
    expect(me.elector.isLeader).to.be.false
    expect(me.elector.leader).to.equal(OTHER)
    expect(me.newLeaders).to.deep.equal([OTHER])
  })

  for (const [skew, renewTime] of [
    ['in the future', '2030-01-01T00:00:00.000000Z'],
    ['far in the past', '2000-01-01T00:00:00.000000Z'],
  ] as const) {
    it(`takes a silent Lease a lease duration after first seeing it, with its renewTime ${skew}; transitions + 1`, async () => {
      store.put(heldBy(OTHER, renewTime))
      const me = new Replica(clock, store, ME).start()
      await clock.advance(LEASE - 1)
      expect(store.peek(NAME)?.spec.holderIdentity, 'expiry is judged on our clock, from our first look').to.equal(OTHER)
      await clock.advance(1 + RETRY)
      expect(me.elector.isLeader).to.be.true
      // Tries at 0, 2 s, …, 14 s (not expired), 16 s: the first try at or after 15 s takes it.
      expect(me.startedAt).to.equal(8 * RETRY)
      expect(store.peek(NAME)?.spec).to.deep.equal({
        holderIdentity: ME,
        leaseDurationSeconds: 15,
        acquireTime: '2026-01-01T00:00:16.250000Z',
        renewTime: '2026-01-01T00:00:16.250000Z',
        leaseTransitions: 4,
      })
      expect(me.newLeaders).to.deep.equal([OTHER, ME])
    })
  }

  it('renews every retry period from its last write, without reading, keeping acquireTime', async () => {
    new Replica(clock, store, ME).start()
    await flushPromises()
    store.script.forbid('get', 'create')
    await clock.advance(5 * RETRY)
    expect(store.updates.map((lease) => lease.spec.renewTime)).to.deep.equal([2, 4, 6, 8, 10].map((s) => `2026-01-01T00:00:${String(s).padStart(2, '0')}.250000Z`))
    expect(store.peek(NAME)?.spec).to.deep.include({acquireTime: '2026-01-01T00:00:00.250000Z', leaseTransitions: 0})
  })

  it('loses leadership at the renew deadline, aborting the signal at once even with a renewal hanging', async () => {
    const reach = new Reachable(store)
    const me = new Replica(clock, reach, ME).start()
    await flushPromises()
    reach.mode = 'down'
    await clock.advance(2 * RETRY) // two failed renewals
    reach.mode = 'hang' // the third never answers
    await clock.advance(RENEW - 2 * RETRY - 1)
    expect(me.leading?.aborted).to.equal(false)
    expect(me.result).to.equal(undefined)
    await clock.advance(1)
    expect(me.leading?.aborted).to.equal(true)
    expect(me.elector.isLeader).to.be.false
    expect(me.stoppedLeading).to.equal(1)
    expect(me.result).to.equal('lost')
  })

  it('answers a conflict on renew by reading the Lease again and renewing it', async () => {
    const me = new Replica(clock, store, ME).start()
    await flushPromises()
    store.script.failOn('update', 1, new ConflictError('the object has been modified'))
    await clock.advance(RETRY)
    expect(store.script.log).to.deep.equal(['get', 'create', 'update', 'get', 'update'])
    expect(me.elector.isLeader).to.be.true
    expect(store.peek(NAME)?.spec.renewTime).to.equal('2026-01-01T00:00:02.250000Z')
  })

  it('stops leading at once when it finds the Lease held by another', async () => {
    const me = new Replica(clock, store, ME).start()
    await flushPromises()
    store.put(heldBy(OTHER, '2026-01-01T00:00:01.000000Z'))
    await clock.advance(RETRY)
    expect(me.leading?.aborted).to.equal(true)
    expect(me.result).to.equal('lost')
    expect(store.peek(NAME)?.spec.holderIdentity).to.equal(OTHER)
  })

  it('a standby leads after the leader goes silent: not before it stopped, within leaseDuration + retryPeriod of its last renewal', async () => {
    const reach = new Reachable(store)
    const leader = new Replica(clock, reach, ME).start()
    await clock.advance(500)
    const standby = new Replica(clock, store, OTHER).start()
    await clock.advance(3 * RETRY - 500) // the leader renewed at +2 s, +4 s, +6 s
    const lastRenewal = clock.monotonic()
    expect(store.peek(NAME)?.spec.renewTime).to.equal('2026-01-01T00:00:06.250000Z')
    reach.mode = 'down'
    // Sample both every 100 ms: never two leaders at once.
    while (standby.startedAt === undefined) {
      expect(leader.elector.isLeader && standby.elector.isLeader, `two leaders at +${clock.monotonic()} ms`).to.be.false
      await clock.advance(100)
    }
    expect(leader.result).to.equal('lost')
    expect(standby.startedAt).to.be.at.least(lastRenewal + LEASE)
    expect(standby.startedAt).to.be.at.most(lastRenewal + LEASE + RETRY)
    expect(store.peek(NAME)?.spec).to.deep.include({holderIdentity: OTHER, leaseTransitions: 1})
  })

  it('judges the holder by the lease duration the holder wrote, not by its own flag', async () => {
    const reach = new Reachable(store)
    const leader = new Replica(clock, reach, ME, {leaseDurationMs: 60_000, renewDeadlineMs: 40_000}).start()
    await clock.advance(500)
    expect(store.peek(NAME)?.spec.leaseDurationSeconds).to.equal(60)
    const standby = new Replica(clock, store, OTHER).start() // its own flag: 15 s
    await clock.advance(3 * RETRY - 500)
    const lastRenewal = clock.monotonic()
    reach.mode = 'down'
    while (standby.startedAt === undefined) {
      expect(leader.elector.isLeader && standby.elector.isLeader, `two leaders at +${clock.monotonic()} ms`).to.be.false
      await clock.advance(500)
    }
    expect(leader.result).to.equal('lost')
    expect(standby.startedAt, 'not after its own 15 s: after the 60 s the holder wrote').to.be.at.least(lastRenewal + 60_000)
  })

  for (const step of [3_600_000, -3_600_000]) {
    it(`a wall-clock step of ${step > 0 ? '+' : '-'}1h on leader and standby changes no leadership`, async () => {
      const leader = new Replica(clock, store, ME).start()
      await clock.advance(500)
      const standby = new Replica(clock, store, OTHER).start()
      await clock.advance(4 * RETRY)
      clock.stepWall(step)
      for (let i = 0; i < 60; i++) {
        await clock.advance(1000)
        expect(leader.elector.isLeader, `leader still leading at +${i} s after the step`).to.be.true
        expect(standby.elector.isLeader).to.be.false
      }
      expect(leader.result).to.equal(undefined)
      expect(store.peek(NAME)?.spec.leaseTransitions).to.equal(0)
      // The record keeps moving: the written renewTime follows the (stepped) wall clock.
      expect(store.peek(NAME)?.spec.renewTime?.slice(0, 13)).to.equal(new Date(clock.wall()).toISOString().slice(0, 13))
    })
  }

  it('releaseOnCancel: a clean stop aborts the leader signal, then hands the Lease back; the standby takes it on its next try', async () => {
    const leader = new Replica(clock, store, ME, {releaseOnCancel: true}).start()
    await flushPromises()
    const standby = new Replica(clock, store, OTHER).start()
    await clock.advance(RETRY)
    let abortedBeforeRelease: boolean | undefined
    store.script.beforeCall('update', store.script.calls('update') + 1, () => (abortedBeforeRelease = leader.leading?.aborted))
    leader.controller.abort()
    expect(await leader.done).to.equal('stopped')
    expect(abortedBeforeRelease).to.equal(true)
    expect(leader.stoppedLeading).to.equal(1)
    expect(store.peek(NAME)?.spec).to.deep.equal({
      leaseDurationSeconds: 1,
      acquireTime: '2026-01-01T00:00:02.250000Z',
      renewTime: '2026-01-01T00:00:02.250000Z',
      leaseTransitions: 0,
    })
    await clock.advance(RETRY)
    expect(standby.elector.isLeader).to.be.true
    expect(store.peek(NAME)?.spec).to.deep.include({holderIdentity: OTHER, leaseTransitions: 1})
  })

  it('stops without writing when aborted before it ever leads', async () => {
    store.put(heldBy(OTHER, '2026-01-01T00:00:00.000000Z'))
    const me = new Replica(clock, store, ME, {releaseOnCancel: true}).start()
    await flushPromises()
    store.script.forbid('create', 'update')
    me.controller.abort()
    expect(await me.done).to.equal('stopped')
    expect(me.stoppedLeading).to.equal(0)
    expect(clock.pending).to.equal(0)
  })

  it('validation names the flags: lease > renew deadline > retry × 1.2 > 0, namespace and id', () => {
    expect(validateLeaderElection({...LEADER_ELECTION_DEFAULTS, name: NAME, namespace: NS})).to.deep.equal([])
    expect(validateLeaderElection({leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000})).to.deep.equal([
      '--leader-elect-lease-duration (10s) must be greater than --leader-elect-renew-deadline (10s)',
    ])
    expect(validateLeaderElection({leaseDurationMs: 15_000, renewDeadlineMs: 2_400, retryPeriodMs: 2_000})).to.deep.equal([
      '--leader-elect-renew-deadline (2.4s) must be greater than --leader-elect-retry-period (2s) × 1.2 (2.4s)',
    ])
    expect(validateLeaderElection({leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 0, name: 'Bad_Name', namespace: 'a.b'})).to.deep.equal([
      '--leader-elect-retry-period must be > 0 (got 0s)',
      `--leader-election-namespace "a.b" must be a valid namespace name (a DNS label: lowercase letters, digits and '-', at most 63 characters)`,
      `--leader-election-id "Bad_Name" must be a valid Lease name (a DNS subdomain: lowercase letters, digits, '-' and '.')`,
    ])
    expect(() => new Replica(clock, store, ME, {leaseDurationMs: 1_000})).to.throw(
      'invalid leader election settings: --leader-elect-lease-duration (1s) must be greater than --leader-elect-renew-deadline (10s)',
    )
  })

  for (const [random, gap] of [
    [0, RETRY],
    [0.999, RETRY * (1 + 0.999 * 1.2)],
  ] as const) {
    it(`waits retryPeriod × (1 + ${random} × 1.2) = ${gap.toFixed(1)} ms between tries to acquire (client-go's JitterFactor)`, async () => {
      store.put(heldBy(OTHER, '2026-01-01T00:00:00.000000Z'))
      new Replica(clock, store, ME, {random: () => random}).start()
      await clock.advance(3 * gap + 1)
      expect(store.script.calls('get')).to.equal(4)
      expect(clock.nextTimerAt()).to.be.closeTo(4 * gap, 1e-3)
    })
  }

  describe('the rules a mutation run found undefended (issue 30)', () => {
    let logger: FakeLogger
    beforeEach(() => (logger = new FakeLogger()))
    const said = (level: 'debug' | 'info' | 'warn' | 'error') => logger.at(level).map((e) => e.msg)

    it('refuses a second run while one runs; runs again once it ended', async () => {
      const me = new Replica(clock, store, ME, {logger}).start()
      await flushPromises()
      let second: unknown
      await me.elector.run(new AbortController().signal).catch((error: unknown) => (second = error))
      expect(String(second)).to.equal('Error: LeaderElector.run is already running')
      me.controller.abort()
      expect(await me.done).to.equal('stopped')
      const again = new AbortController()
      const run = me.elector.run(again.signal)
      await flushPromises()
      expect(me.elector.isLeader).to.be.true
      again.abort()
      expect(await run).to.equal('stopped')
    })

    it('says what it does: attempting, acquired, lost (the reason in the leader signal too)', async () => {
      const reach = new Reachable(store)
      const me = new Replica(clock, reach, ME, {logger}).start()
      await flushPromises()
      expect(said('info')).to.deep.equal([`attempting to acquire leader lease ${NS}/${NAME}`, `acquired leader lease ${NS}/${NAME}`])
      expect(logger.at('info')[0]?.obj).to.deep.equal({lease: `${NS}/${NAME}`})
      expect(logger.at('info')[1]?.obj).to.deep.equal({lease: `${NS}/${NAME}`, identity: ME})
      reach.mode = 'down'
      await clock.advance(RENEW)
      expect(await me.done).to.equal('lost')
      expect(said('warn').at(-1)).to.equal(`lost leader lease ${NS}/${NAME}: no successful renewal within ${RENEW} ms`)
      expect(logger.at('warn').at(-1)?.obj).to.deep.equal({lease: `${NS}/${NAME}`, identity: ME})
      expect((me.leading?.reason as Error).message).to.equal(`leadership lost: no successful renewal within ${RENEW} ms`)
      // Each failed renewal is a warning naming the call and the error.
      expect(said('warn')[0]).to.equal(`failed to renew leader lease ${NS}/${NAME}: connect ECONNREFUSED 127.0.0.1:6443`)
      expect(logger.at('warn')[0]?.obj).to.deep.equal({lease: `${NS}/${NAME}`, err: 'connect ECONNREFUSED 127.0.0.1:6443'})
      expect(clock.pending, 'no deadline left armed').to.equal(0)
      expect(getEventListeners(me.controller.signal, 'abort'), 'no listener left on the run\'s signal').to.have.length(0)
    })

    it('a Lease found held by another ends leadership with that reason, once', async () => {
      const me = new Replica(clock, store, ME, {logger}).start()
      await flushPromises()
      store.put(heldBy(OTHER, '2026-01-01T00:00:00.000000Z'))
      await clock.advance(RETRY)
      expect(await me.done).to.equal('lost')
      expect(logger.at('warn').map((e) => e.msg)).to.deep.equal([`lost leader lease ${NS}/${NAME}: lease is held by ${OTHER}`])
    })

    it('failures to acquire: a warning for a fault, a debug line for a lost race', async () => {
      const reach = new Reachable(store)
      reach.mode = 'down'
      const me = new Replica(clock, reach, ME, {logger}).start()
      await flushPromises()
      expect(said('warn')).to.deep.equal([`failed to acquire leader lease ${NS}/${NAME}: connect ECONNREFUSED 127.0.0.1:6443`])
      reach.mode = 'up'
      store.script.failNext('create', () => new AlreadyExistsError('leases "ironpool-controller" already exists'))
      await clock.advance(RETRY)
      store.script.failNext('update', () => new ConflictError('the object has been modified'))
      expect(said('debug')).to.deep.equal([`failed to acquire leader lease ${NS}/${NAME}: leases "ironpool-controller" already exists`])
      expect(said('warn')).to.have.length(1)
      await clock.advance(RETRY)
      expect(me.elector.isLeader).to.be.true
      await clock.advance(RETRY) // the renewal meets a conflict, reads and renews: no line above debug
      expect(said('warn')).to.have.length(1)
      me.controller.abort()
      await me.done
    })

    it('a renewal that fails for another reason than a conflict is not answered by a read in the same try', async () => {
      const me = new Replica(clock, store, ME, {logger}).start()
      await flushPromises()
      store.script.failNext('update', () => new Error('update lease: no answer within 5s'))
      const reads = store.script.calls('get')
      await clock.advance(RETRY)
      expect(store.script.calls('get')).to.equal(reads)
      expect(said('warn')).to.deep.equal([`failed to renew leader lease ${NS}/${NAME}: update lease: no answer within 5s`])
      await clock.advance(RETRY)
      expect(me.elector.isLeader).to.be.true
      me.controller.abort()
      await me.done
    })

    it('stopped while leading: no renewal failure is logged for the renewal the stop cut off, no deadline stays armed, no listener stays', async () => {
      const reach = new Reachable(store)
      const me = new Replica(clock, reach, ME, {logger}).start()
      await flushPromises()
      reach.mode = 'hang'
      await clock.advance(RETRY)
      me.controller.abort()
      expect(await me.done).to.equal('stopped')
      expect(said('warn')).to.deep.equal([])
      expect(clock.pending).to.equal(0)
      expect(getEventListeners(me.controller.signal, 'abort')).to.have.length(0)
    })

    it('stopped while waiting for its next renewal, it reads nothing more (even with no Lease of its own to renew from)', async () => {
      const me = new Replica(clock, store, ME, {logger}).start()
      await flushPromises()
      // A renewal that meets a conflict, then fails its read: nothing of its own to renew from.
      store.script.failNext('update', () => new ConflictError('the object has been modified'))
      store.script.failNext('get', () => new Error('connection reset'))
      await clock.advance(RETRY)
      const reads = store.script.calls('get')
      me.controller.abort()
      expect(await me.done).to.equal('stopped')
      expect(store.script.calls('get')).to.equal(reads)
    })

    it('renewals leave no listener behind on the leader signal', async () => {
      const me = new Replica(clock, store, ME).start()
      await flushPromises()
      await clock.advance(10 * RETRY)
      expect(getEventListeners(me.leading!, 'abort').length).to.be.at.most(1)
      me.controller.abort()
      await me.done
    })

    it('stopped while its acquiring write is out, which lands: ends at once without leading, no callbacks; with releaseOnCancel hands the Lease back', async () => {
      const me = new Replica(clock, store, ME, {logger, releaseOnCancel: true})
      store.script.beforeCall('create', 1, () => me.controller.abort())
      me.start()
      await flushPromises()
      expect(me.result).to.equal('stopped')
      expect(me.startedAt).to.equal(undefined)
      expect(me.stoppedLeading).to.equal(0)
      expect(said('info')).to.not.include(`acquired leader lease ${NS}/${NAME}`)
      expect(store.peek(NAME)?.spec.holderIdentity).to.equal(undefined)
      expect(said('info').at(-1)).to.equal(`released leader lease ${NS}/${NAME}`)
    })

    it('stopped while its read is out: no write leaves after it', async () => {
      store.put(heldBy(OTHER, '2026-01-01T00:00:00.000000Z'))
      const me = new Replica(clock, store, ME, {logger})
      me.start()
      await clock.advance(LEASE - 1) // the next try, at 16 s, would take the silent Lease
      store.script.beforeCall('get', store.script.calls('get') + 1, () => me.controller.abort())
      store.script.forbid('create', 'update')
      await clock.advance(RETRY)
      expect(await me.done).to.equal('stopped')
      expect(store.peek(NAME)?.spec.holderIdentity).to.equal(OTHER)
    })

    it('without releaseOnCancel a stop keeps the Lease; a lost leadership never releases', async () => {
      const me = new Replica(clock, store, ME).start()
      await flushPromises()
      me.controller.abort()
      await me.done
      expect(store.peek(NAME)?.spec.holderIdentity).to.equal(ME)
      const reach = new Reachable(store)
      const other = new Replica(clock, reach, OTHER, {logger, releaseOnCancel: true}).start()
      await clock.advance(LEASE + RETRY)
      expect(other.elector.isLeader).to.be.true
      reach.mode = 'down'
      await clock.advance(RENEW)
      expect(await other.done).to.equal('lost')
      expect(said('warn').filter((m) => m.startsWith('could not release'))).to.deep.equal([])
    })

    it('a release that meets its own renewal reads once and releases, keeping the transitions; one that cannot write says so', async () => {
      store.put({...heldBy(OTHER, '2026-01-01T00:00:00.000000Z')})
      const me = new Replica(clock, store, ME, {logger, releaseOnCancel: true}).start()
      await clock.advance(LEASE + RETRY)
      expect(me.elector.isLeader).to.be.true
      // Someone touches the Lease (same holder): the release's write conflicts.
      store.put(store.peek(NAME)!)
      me.controller.abort()
      await me.done
      expect(store.peek(NAME)?.spec.holderIdentity).to.equal(undefined)
      expect(store.peek(NAME)?.spec.leaseTransitions).to.equal(4)
      expect(said('info').at(-1)).to.equal(`released leader lease ${NS}/${NAME}`)
      expect(logger.at('info').at(-1)?.obj).to.deep.equal({lease: `${NS}/${NAME}`, identity: ME})

      // A release refused for another reason than a conflict is not tried again: said, and left to expire.
      const again = new Replica(clock, store, ME, {logger, releaseOnCancel: true}).start()
      await flushPromises()
      expect(again.elector.isLeader).to.be.true
      store.script.failNext('update', () => new Error('etcdserver: request timed out'))
      again.controller.abort()
      await again.done
      expect(store.peek(NAME)?.spec.holderIdentity).to.equal(ME)
      expect(said('warn').at(-1)).to.equal(`could not release leader lease ${NS}/${NAME}: etcdserver: request timed out`)
      expect(logger.at('warn').at(-1)?.obj).to.deep.equal({lease: `${NS}/${NAME}`, err: 'etcdserver: request timed out'})
    })

    it('a second run after a release acquires the Lease anew as its holder (the released record is not ours to renew)', async () => {
      const me = new Replica(clock, store, ME, {releaseOnCancel: true}).start()
      await flushPromises()
      me.controller.abort()
      await me.done
      const again = new AbortController()
      const run = me.elector.run(again.signal)
      await flushPromises()
      expect(store.peek(NAME)?.spec.holderIdentity).to.equal(ME)
      again.abort()
      await run
    })

    it('takes a silent Lease at exactly its duration after first seeing it', async () => {
      store.put({...heldBy(OTHER, '2026-01-01T00:00:00.000000Z'), spec: {...heldBy(OTHER, '2026-01-01T00:00:00.000000Z').spec, leaseDurationSeconds: 16}})
      const me = new Replica(clock, store, ME).start()
      await clock.advance(16_000)
      expect(me.startedAt).to.equal(16_000)
      me.controller.abort()
      await me.done
    })

    it('a holder that wrote a duration of 0 is judged by our own lease duration', async () => {
      store.put({...heldBy(OTHER, '2026-01-01T00:00:00.000000Z'), spec: {...heldBy(OTHER, '2026-01-01T00:00:00.000000Z').spec, leaseDurationSeconds: 0}})
      const me = new Replica(clock, store, ME).start()
      await clock.advance(LEASE - 1)
      expect(me.elector.isLeader).to.be.false
      await clock.advance(1 + RETRY)
      expect(me.elector.isLeader).to.be.true
      me.controller.abort()
      await me.done
    })

    it('a throwing callback is logged by name and the election goes on', async () => {
      const boom = () => {
        throw new Error('boom')
      }
      const me = new Replica(clock, store, ME, {logger, onStartedLeading: boom, onStoppedLeading: boom, onNewLeader: boom}).start()
      await flushPromises()
      expect(me.elector.isLeader).to.be.true
      me.controller.abort()
      await me.done
      expect(said('error')).to.deep.equal(['onNewLeader', 'onStartedLeading', 'onStoppedLeading'].map((name) => `leader election callback ${name} threw: boom`))
      expect(logger.at('error')[0]?.obj).to.deep.equal({callback: 'onNewLeader', err: 'boom'})
    })

    it('a namespace of 63 characters is a DNS label; 64 is not', () => {
      const ns = (n: number) => validateLeaderElection({...LEADER_ELECTION_DEFAULTS, name: NAME, namespace: 'a'.repeat(n)})
      expect(ns(63)).to.deep.equal([])
      expect(ns(64)).to.have.length(1)
    })

    it('joins every broken rule into the constructor\'s error', () => {
      expect(() => new Replica(clock, store, ME, {leaseDurationMs: 1_000, retryPeriodMs: 0})).to.throw(
        'invalid leader election settings: --leader-elect-retry-period must be > 0 (got 0s); --leader-elect-lease-duration (1s) must be greater than --leader-elect-renew-deadline (10s)',
      )
    })
  })
})
