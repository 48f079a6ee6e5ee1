import {expect} from 'chai'
import {AlreadyExistsError, ConflictError, ForbiddenError} from '../../../../src/core/errors.ts'
import {LEASE_WRITE_ATTEMPTS, LeaseRenewer, defaultHolderIdentity} from '../../../../src/core/heartbeat/lease-renewer.ts'
import {FakeClock} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'
import {FakeLeaseStore} from '../../../support/fake-stores.ts'

const NS = 'ironcore-machinepool-lease'
const NAME = 'p1'
const ME = defaultHolderIdentity(NAME, '0b5c1f4e-8d1a-4c39-9d0e-2a7f3c1b6e55')
const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/

describe('LeaseRenewer', () => {
  let clock: FakeClock
  let store: FakeLeaseStore
  let logger: FakeLogger
  let renewer: LeaseRenewer
  beforeEach(() => {
    clock = new FakeClock(Date.parse('2026-01-01T00:00:00.250Z'))
    store = new FakeLeaseStore()
    logger = new FakeLogger()
    renewer = new LeaseRenewer({store, clock, logger, name: NAME, namespace: NS, holderIdentity: ME, leaseDurationSeconds: 40})
  })

  it('defaultHolderIdentity is <pool>_<uuid>', () => {
    expect(defaultHolderIdentity('p1', 'abc')).to.equal('p1_abc')
  })

  it('creates a missing Lease with holder, duration, acquireTime = renewTime in MicroTime, and 0 transitions', async () => {
    const result = await renewer.renew()
    expect(result.outcome).to.equal('created')
    const lease = store.peek(NAME)
    expect(lease).to.deep.include({name: NAME, namespace: NS})
    expect(lease?.spec).to.deep.equal({
      holderIdentity: ME,
      leaseDurationSeconds: 40,
      acquireTime: '2026-01-01T00:00:00.250000Z',
      renewTime: '2026-01-01T00:00:00.250000Z',
      leaseTransitions: 0,
    })
    expect(lease?.spec.renewTime).to.match(MICRO_TIME)
  })

  it('renews with the resourceVersion of its last write and reads nothing in steady state', async () => {
    const created = await renewer.renew()
    const firstVersion = created.outcome === 'created' ? created.lease.resourceVersion : undefined
    store.script.forbid('get', 'create')
    await clock.advance(10_000)
    const first = await renewer.renew()
    await clock.advance(10_000)
    const second = await renewer.renew()
    expect([first.outcome, second.outcome]).to.deep.equal(['renewed', 'renewed'])
    // Each update carries the version the previous write returned.
    const sent = store.updates.map((lease) => lease.resourceVersion)
    expect(sent).to.deep.equal([firstVersion, first.outcome === 'renewed' ? first.lease.resourceVersion : 'none'])
    expect(store.peek(NAME)?.spec).to.deep.include({
      acquireTime: '2026-01-01T00:00:00.250000Z',
      renewTime: '2026-01-01T00:00:20.250000Z',
      leaseTransitions: 0,
    })
  })

  it('on a conflict reads the Lease again and retries, then succeeds', async () => {
    await renewer.renew()
    // Someone else touched our Lease (same holder): our resourceVersion is stale.
    const current = store.peek(NAME)
    if (current) store.put(current)
    const result = await renewer.renew()
    expect(result.outcome).to.equal('renewed')
    expect(store.script.log).to.deep.equal(['get', 'create', 'update', 'get', 'update'])
  })

  it(`gives up after ${LEASE_WRITE_ATTEMPTS} conflicts, naming the call, and the next renew recovers`, async () => {
    await renewer.renew()
    store.script.failNext('update', () => new ConflictError('the object has been modified'), LEASE_WRITE_ATTEMPTS)
    const failed = await renewer.renew()
    expect(failed).to.deep.include({outcome: 'error', action: `update lease ${NS}/${NAME}`, attempts: LEASE_WRITE_ATTEMPTS})
    expect(failed.outcome === 'error' && failed.error).to.be.instanceOf(ConflictError)
    expect(store.script.calls('update')).to.equal(LEASE_WRITE_ATTEMPTS)

    await clock.advance(10_000)
    const next = await renewer.renew()
    expect(next.outcome).to.equal('renewed')
    expect(store.peek(NAME)?.spec.renewTime).to.equal('2026-01-01T00:00:10.250000Z')
  })

  it('retries any error at once, up to the attempts, as the lease controller does, and names the call that failed', async () => {
    store.script.failNext('create', () => new ForbiddenError('leases is forbidden'), LEASE_WRITE_ATTEMPTS)
    const result = await renewer.renew()
    expect(result).to.deep.include({outcome: 'error', action: `create lease ${NS}/${NAME}`, attempts: LEASE_WRITE_ATTEMPTS})
    expect(store.script.calls('create')).to.equal(LEASE_WRITE_ATTEMPTS)
    // A timeout, then an answer: one call renews.
    store.script.failNext('create', () => new Error('create lease: no answer within 10s'), 2)
    expect((await renewer.renew()).outcome).to.equal('created')
    expect(store.script.calls('create')).to.equal(LEASE_WRITE_ATTEMPTS + 3)
  })

  it('a failed update that is no race (a timeout, a 500) is tried again with the Lease it has: no read between', async () => {
    await renewer.renew()
    store.script.failNext('update', () => new Error('update lease: no answer within 10s'), 2)
    expect((await renewer.renew()).outcome).to.equal('renewed')
    expect(store.script.log).to.deep.equal(['get', 'create', 'update', 'update', 'update'])
  })

  it('starts no attempt at or after the instant it is given', async () => {
    store.script.failNext('create', () => new Error('connection reset'), LEASE_WRITE_ATTEMPTS)
    const result = await renewer.renew(undefined, clock.monotonic())
    expect(result).to.deep.include({outcome: 'error', attempts: 1})
    expect(store.script.calls('create')).to.equal(1)
  })

  it('takes over a Lease held by another identity: new holder and acquireTime, transitions + 1, Info log', async () => {
    store.put({
      name: NAME,
      namespace: NS,
      spec: {
        holderIdentity: 'p1_old',
        leaseDurationSeconds: 40,
        acquireTime: '2025-12-31T00:00:00.000000Z',
        renewTime: '2025-12-31T23:59:00.000000Z',
        leaseTransitions: 2,
      },
    })
    const result = await renewer.renew()
    expect(result).to.deep.include({outcome: 'took-over', previousHolder: 'p1_old'})
    expect(store.peek(NAME)?.spec).to.deep.equal({
      holderIdentity: ME,
      leaseDurationSeconds: 40,
      acquireTime: '2026-01-01T00:00:00.250000Z',
      renewTime: '2026-01-01T00:00:00.250000Z',
      leaseTransitions: 3,
    })
    const infos = logger.at('info')
    expect(infos).to.have.length(1)
    expect(infos[0]?.msg).to.equal(`took over lease ${NS}/${NAME} from p1_old`) // a predecessor's: nothing said of it leaving it unrenewed
    expect(infos[0]?.obj).to.include({previousHolder: 'p1_old', lease: `${NS}/${NAME}`})
  })

  it('takes over a Lease without a holder, and says it had none', async () => {
    store.put({name: NAME, namespace: NS, spec: {leaseTransitions: 1}})
    const result = await renewer.renew()
    expect(result.outcome).to.equal('took-over')
    expect(result.outcome === 'took-over' && result.previousHolder).to.be.undefined
    expect(store.peek(NAME)?.spec).to.deep.include({holderIdentity: ME, leaseTransitions: 2})
    expect(logger.at('info').map((e) => e.msg)).to.deep.equal([`took over lease ${NS}/${NAME}, which had no holder`])
  })

  it('after a takeover, later renewals keep the acquireTime and transitions', async () => {
    store.put({name: NAME, namespace: NS, spec: {holderIdentity: 'p1_old', leaseTransitions: 0}})
    await renewer.renew()
    await clock.advance(10_000)
    const result = await renewer.renew()
    expect(result.outcome).to.equal('renewed')
    expect(store.peek(NAME)?.spec).to.deep.include({acquireTime: '2026-01-01T00:00:00.250000Z', leaseTransitions: 1})
    expect(logger.at('info')).to.have.length(1)
  })

  it('AlreadyExists on create: reads the Lease and renews it', async () => {
    // Another process of ours (same identity) creates it between our read and our create.
    store.script.beforeCall('create', 1, () => {
      store.put({name: NAME, namespace: NS, spec: {holderIdentity: ME, leaseDurationSeconds: 40, leaseTransitions: 0}})
    })
    const result = await renewer.renew()
    expect(result.outcome).to.equal('renewed')
    expect(store.script.log).to.deep.equal(['get', 'create', 'get', 'update'])
  })

  it('AlreadyExists on create with another holder: reads and takes over', async () => {
    store.script.failNext('create', () => new AlreadyExistsError('exists'))
    store.script.beforeCall('get', 2, () => {
      store.put({name: NAME, namespace: NS, spec: {holderIdentity: 'p1_other', leaseTransitions: 0}})
    })
    const result = await renewer.renew()
    expect(result).to.deep.include({outcome: 'took-over', previousHolder: 'p1_other'})
  })

  it('re-creates a Lease deleted behind its back', async () => {
    await renewer.renew()
    store.delete(NAME)
    const result = await renewer.renew()
    expect(result.outcome).to.equal('created')
    expect(store.script.log).to.deep.equal(['get', 'create', 'update', 'get', 'create'])
  })

  describe('LeaseRenewer: a good neighbour to another live holder (issue 21)', () => {
    const RIVAL = 'machinepoollet-7f9c'

    /** The rival renews as IronCore's machinepoollet does: takes the Lease (back) and stamps renewTime, its own duration. */
    function rivalRenews(renewTime = new Date(clock.wall()).toISOString().replace('Z', '000Z'), durationSeconds = 20): void {
      const current = store.peek(NAME)!
      const taking = current.spec.holderIdentity !== RIVAL
      store.put({...current, spec: {...current.spec, holderIdentity: RIVAL, leaseDurationSeconds: durationSeconds, renewTime, leaseTransitions: (current.spec.leaseTransitions ?? 0) + (taking ? 1 : 0)}})
    }

    it('takes over a Lease it finds held by another identity when it first comes to it (a predecessor), at once', async () => {
      store.put({name: NAME, namespace: NS, spec: {holderIdentity: 'p1_predecessor', leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:00.000000Z', leaseTransitions: 3}})
      const result = await renewer.renew()
      expect(result).to.deep.include({outcome: 'took-over', previousHolder: 'p1_predecessor'})
      expect(store.peek(NAME)?.spec).to.deep.include({holderIdentity: ME, leaseTransitions: 4})
    })

    it('yields when another holder renews the Lease after this process held it: no write, said as the first of the yield', async () => {
      await renewer.renew()
      rivalRenews()
      const writes = store.updates.length
      const result = await renewer.renew()
      expect(result).to.deep.include({outcome: 'yielded', holder: RIVAL, first: true, expiresInMs: 20_000})
      expect(store.updates).to.have.length(writes + 1) // the renewal that met the rival's write (a conflict), nothing after it
      expect(store.peek(NAME)?.spec.holderIdentity).to.equal(RIVAL)
    })

    it('stays yielded, writing nothing, while the rival keeps renewing; not "first" again', async () => {
      await renewer.renew()
      rivalRenews()
      await renewer.renew()
      const writes = store.updates.length
      const outcomes: string[] = []
      for (let i = 0; i < 10; i++) {
        await clock.advance(10_000)
        rivalRenews()
        const result = await renewer.renew()
        outcomes.push(`${result.outcome}${result.outcome === 'yielded' && result.first ? ' first' : ''}`)
      }
      expect(outcomes).to.deep.equal(Array(10).fill('yielded'))
      expect(store.updates).to.have.length(writes)
      expect(store.script.calls('update')).to.equal(writes)
    })

    it('takes the Lease again once the rival left it unrenewed for the rival’s own duration, on the monotonic clock from when it last saw a change', async () => {
      await renewer.renew()
      rivalRenews(undefined, 20)
      await renewer.renew() // yields; the rival's Lease seen now
      await clock.advance(19_999)
      expect((await renewer.renew()).outcome).to.equal('yielded')
      await clock.advance(1)
      const result = await renewer.renew()
      expect(result).to.deep.include({outcome: 'took-over', previousHolder: RIVAL})
      expect(store.peek(NAME)?.spec.holderIdentity).to.equal(ME)
      expect(logger.entries.at(-1)?.msg).to.equal(`took over lease ${NS}/${NAME} from ${RIVAL}, which left it unrenewed for its lease duration`)
    })

    it('never judges the rival’s renewTime against its own clock: a rival stamping times long past, or a wall clock stepped an hour, change nothing', async () => {
      await renewer.renew()
      rivalRenews('2025-06-01T00:00:00.000000Z', 20) // a rival whose clock is months behind: "expired" by our wall clock
      expect((await renewer.renew()).outcome).to.equal('yielded')
      clock.stepWall(3_600_000)
      await clock.advance(10_000)
      rivalRenews('2025-06-01T00:00:10.000000Z', 20)
      expect((await renewer.renew()).outcome).to.equal('yielded')
      await clock.advance(19_000)
      expect((await renewer.renew()).outcome).to.equal('yielded')
      await clock.advance(1_000)
      expect((await renewer.renew()).outcome).to.equal('took-over')
    })

    it('yields again, said again, when the rival comes back after it took the Lease again', async () => {
      await renewer.renew()
      rivalRenews()
      await renewer.renew()
      await clock.advance(20_000)
      expect((await renewer.renew()).outcome).to.equal('took-over')
      await renewer.renew()
      rivalRenews()
      expect(await renewer.renew()).to.deep.include({outcome: 'yielded', first: true})
    })

    it('takes the Lease at once while yielding when it is released (no holder) or deleted', async () => {
      await renewer.renew()
      rivalRenews()
      await renewer.renew()
      const current = store.peek(NAME)!
      store.put({...current, spec: {...current.spec, holderIdentity: undefined}})
      expect(await renewer.renew()).to.deep.include({outcome: 'took-over'})
      rivalRenews()
      expect((await renewer.renew()).outcome).to.equal('yielded')
      store.delete(NAME)
      expect((await renewer.renew()).outcome).to.equal('created')
    })

    it('a new process (a restarted poollet with a new identity) takes over its predecessor at once, even one that held it a moment ago', async () => {
      await renewer.renew()
      const successor = new LeaseRenewer({store, clock, logger, name: NAME, namespace: NS, holderIdentity: defaultHolderIdentity(NAME, 'new-uuid'), leaseDurationSeconds: 40})
      expect(await successor.renew()).to.deep.include({outcome: 'took-over', previousHolder: ME})
      // The predecessor, were it still alive, now finds a rival and yields instead of taking it back.
      expect(await renewer.renew()).to.deep.include({outcome: 'yielded', holder: defaultHolderIdentity(NAME, 'new-uuid')})
    })
  })
})
