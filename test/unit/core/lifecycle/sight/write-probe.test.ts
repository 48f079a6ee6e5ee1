/**
 * The sight's write probe: reads answer while etcd refuses writes (NOSPACE), so the poollets' silence
 * counts only while the controller's own writes land, and again only after a settle window in which
 * every live poollet has had a tick and a request deadline to renew. At the production timings.
 */
import {expect} from 'chai'
import {AlreadyExistsError, ConflictError, ForbiddenError} from '../../../../../src/core/errors.ts'
import {Sight, WRITE_FAILURE_THRESHOLD, sightTimings, type SightState} from '../../../../../src/core/lifecycle/sight/sight.ts'
import {WRITE_PROBE_LEASE, writeProbe} from '../../../../../src/core/lifecycle/sight/write-probe.ts'
import type {Lease} from '../../../../../src/core/types.ts'
import {FakeClock} from '../../../../support/fake-clock.ts'
import {FakeLogger} from '../../../../support/fake-logger.ts'
import {FakeLeaseStore} from '../../../../support/fake-stores.ts'

const PRODUCTION = sightTimings(50_000)

function setup() {
  const clock = new FakeClock()
  const logger = new FakeLogger()
  const writes = {mode: 'ok' as 'ok' | 'refuse' | 'forbidden' | 'hang', calls: 0}
  const sight = new Sight({
    clock,
    logger,
    probe: () => Promise.resolve(),
    ...PRODUCTION,
    writeProbe: () => {
      writes.calls++
      if (writes.mode === 'refuse') return Promise.reject(new Error('etcdserver: mvcc: database space exceeded'))
      if (writes.mode === 'forbidden') return Promise.reject(new ForbiddenError('leases is forbidden'))
      if (writes.mode === 'hang') return new Promise<void>(() => {})
      return Promise.resolve()
    },
  })
  const states: SightState[] = []
  sight.subscribe((s) => states.push(s))
  const stop = new AbortController()
  void sight.run(stop.signal)
  return {clock, logger, sight, states, writes, stop}
}

describe('Sight: the write probe', () => {
  it('derives its cadence and deadline from the grace period as the poollets do theirs (10 s and 10 s at 50 s)', () => {
    expect(PRODUCTION.writeProbeIntervalMs).to.equal(10_000)
    expect(PRODUCTION.writeProbeTimeoutMs).to.equal(10_000)
    expect(sightTimings(4_000).writeProbeIntervalMs).to.equal(800)
  })

  it('one failed write is no outage; two in a row are blindness backdated to the last write that landed', async () => {
    const {clock, sight, states, writes, stop} = setup()
    await clock.advance(1)
    expect(sight.check()).to.be.true
    writes.mode = 'refuse'
    // The write at 10 s fails: one sample.
    await clock.advance(10_000)
    expect(sight.check(), `${WRITE_FAILURE_THRESHOLD - 1} failure`).to.be.true
    await clock.advance(10_000)
    expect(sight.check()).to.be.false
    const blind = states.at(-1)!
    expect(blind.reason).to.equal('api-unanswered')
    expect(blind.detail).to.contain('writes fail: etcdserver: mvcc: database space exceeded')
    // Since the write at 0 s landed: the 20 s of refusals are no pool's silence.
    expect(blind.blindForMs).to.equal(20_000)
    stop.abort()
  })

  it('once writes land again, stays blind for a heartbeat interval and a request deadline, then sees', async () => {
    const {clock, sight, states, writes, stop} = setup()
    await clock.advance(0)
    writes.mode = 'refuse'
    // Writes at 10 s ... 180 s refused.
    await clock.advance(185_000)
    expect(sight.check()).to.be.false
    writes.mode = 'ok'
    // The next write (at 190 s, on the 10 s cadence) lands; reads answered all along.
    await clock.advance(5_000)
    const landedAt = clock.monotonic()
    expect(sight.check(), 'settling').to.be.false
    expect(states.at(-1)!.reason).to.equal('api-unanswered')
    await clock.advance(19_999)
    expect(sight.check(), 'still settling just before interval + deadline').to.be.false
    await clock.advance(1)
    expect(sight.check()).to.be.true
    expect(clock.monotonic() - landedAt).to.equal(PRODUCTION.writeProbeIntervalMs! + PRODUCTION.writeProbeTimeoutMs!)
    stop.abort()
  })

  it('an answered refusal (403) proves the API answers: no blindness, one warning', async () => {
    const {clock, sight, logger, writes, stop} = setup()
    writes.mode = 'forbidden'
    await clock.advance(60_000)
    expect(sight.check()).to.be.true
    expect(writes.calls).to.be.greaterThan(5)
    expect(logger.at('warn').filter((l) => l.msg.includes('the write probe is refused'))).to.have.length(1)
    stop.abort()
  })

  it('after writes failed, an answered refusal counts as landed: whole at once, with no settle window; its warning names the error', async () => {
    const {clock, sight, logger, writes, stop} = setup()
    await clock.advance(0)
    writes.mode = 'refuse'
    await clock.advance(20_000)
    expect(sight.check()).to.be.false
    writes.mode = 'forbidden'
    await clock.advance(10_000)
    // Read without check(): the refusal itself made the sight whole.
    expect(sight.state.reason).to.equal(undefined)
    expect(logger.at('warn').map((l) => l.obj)).to.deep.include({err: 'leases is forbidden'})
    stop.abort()
  })

  it('writes that get no answer within the deadline fail too, and the sight says so', async () => {
    const {clock, sight, writes, stop} = setup()
    await clock.advance(0)
    writes.mode = 'hang'
    await clock.advance(40_000)
    expect(sight.check()).to.be.false
    expect(sight.state.detail).to.equal('writes fail: no answer within 10000 ms')
    stop.abort()
  })
})

describe('writeProbe()', () => {
  class Leases {
    lease: Lease | undefined
    conflict = false
    readonly ops: string[] = []
    get = (name: string) => {
      this.ops.push(`get ${name}`)
      return Promise.resolve(this.lease)
    }
    create = (lease: Lease) => {
      this.ops.push(`create ${lease.name}`)
      this.lease = {...lease, resourceVersion: '1'}
      return Promise.resolve(this.lease)
    }
    update = (lease: Lease) => {
      this.ops.push(`update ${lease.name} rv=${lease.resourceVersion}`)
      if (this.conflict) return Promise.reject(new ConflictError('the object has been modified'))
      this.lease = {...lease, resourceVersion: String(Number(lease.resourceVersion) + 1)}
      return Promise.resolve(this.lease)
    }
  }

  it('creates its Lease, then renews it with its resourceVersion; a conflict (another replica renewed it) is a write landed', async () => {
    const leases = new Leases()
    const clock = new FakeClock()
    const probe = writeProbe({leases, namespace: 'ironpool-system', holderIdentity: 'replica-a', clock})
    await probe(new AbortController().signal)
    await clock.advance(10_000)
    await probe(new AbortController().signal)
    leases.conflict = true
    await probe(new AbortController().signal)
    expect(leases.ops).to.deep.equal([`get ${WRITE_PROBE_LEASE}`, `create ${WRITE_PROBE_LEASE}`, `get ${WRITE_PROBE_LEASE}`, `update ${WRITE_PROBE_LEASE} rv=1`, `get ${WRITE_PROBE_LEASE}`, `update ${WRITE_PROBE_LEASE} rv=2`])
    expect(leases.lease?.spec.holderIdentity).to.equal('replica-a')
    expect(leases.lease?.spec.renewTime).to.equal('2026-01-01T00:00:10.000000Z')
  })

  it('a create that races another replica\'s is a write landed; any other failure is the probe\'s; its Lease is its own name, namespace, holder and time', async () => {
    const leases = new FakeLeaseStore()
    const clock = new FakeClock()
    const probe = writeProbe({leases, namespace: 'ironpool-system', holderIdentity: 'replica-a', clock, name: 'probe-x'})
    leases.script.failNext('create', () => new AlreadyExistsError('leases "probe-x" already exists'))
    await probe(new AbortController().signal)
    leases.script.failNext('create', () => new Error('etcdserver: mvcc: database space exceeded'))
    let failed: unknown
    await probe(new AbortController().signal).catch((error: unknown) => (failed = error))
    expect(String(failed)).to.equal('Error: etcdserver: mvcc: database space exceeded')
    await probe(new AbortController().signal)
    expect(leases.peek('probe-x')).to.deep.include({name: 'probe-x', namespace: 'ironpool-system'})
    expect(leases.peek('probe-x')?.spec).to.deep.equal({holderIdentity: 'replica-a', renewTime: '2026-01-01T00:00:00.000000Z'})
    // Another replica's probe renewed it last: this one writes its own holder.
    leases.put({...leases.peek('probe-x')!, spec: {holderIdentity: 'replica-b', renewTime: '2026-01-01T00:00:00.000000Z'}})
    await clock.advance(1_000)
    await probe(new AbortController().signal)
    expect(leases.peek('probe-x')?.spec).to.deep.equal({holderIdentity: 'replica-a', renewTime: '2026-01-01T00:00:01.000000Z'})
  })
})
