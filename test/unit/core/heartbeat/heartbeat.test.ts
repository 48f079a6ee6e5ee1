import {expect} from 'chai'
import {ForbiddenError, ProbeError} from '../../../../src/core/errors.ts'
import {Heartbeat, RENEW_BACKOFF_MAX_MS, renewBackoffMs, type HeartbeatOptions, type TickResult} from '../../../../src/core/heartbeat/heartbeat.ts'
import {LEASE_WRITE_ATTEMPTS, defaultHolderIdentity} from '../../../../src/core/heartbeat/lease-renewer.ts'
import {POOL_KINDS} from '../../../../src/core/pool-kinds.ts'
import type {PoolEvent, RuntimeProbe} from '../../../../src/core/ports.ts'
import type {Pool, PoolCondition} from '../../../../src/core/types.ts'
import {FakeClock, flushPromises} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'
import {FakeLeaseStore, FakePoolStatusStore} from '../../../support/fake-stores.ts'

const KIND = POOL_KINDS.machine
const NAME = 'p1'
const LEASE = `${KIND.leaseNamespace}/${NAME}`
const SCHEDULED: PoolCondition = {type: 'Scheduled', status: 'True', reason: 'Fine', message: 'ok'}

/** A probe whose answer the test sets; `hang` ignores its signal entirely, as a stuck client would. */
class ScriptedProbe implements RuntimeProbe {
  answer: 'ok' | 'fail' | 'hang' | 'honour-signal' = 'ok'
  error = 'connection refused: unix:///var/run/iri-machinebroker.sock'
  signals: AbortSignal[] = []
  probe(signal: AbortSignal): Promise<void> {
    this.signals.push(signal)
    switch (this.answer) {
      case 'ok':
        return Promise.resolve()
      case 'fail':
        return Promise.reject(new ProbeError(this.error))
      case 'hang':
        return new Promise(() => {})
      case 'honour-signal':
        return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted by signal')), {once: true}))
    }
  }
}

describe('Heartbeat', () => {
  /** Moves the fake clock in small steps until the promise settles (a renewal's backoff sleeps on it). */
  async function untilSettled<T>(promise: Promise<T>, maxMs = 120_000): Promise<T> {
    let settled = false
    void promise.finally(() => (settled = true)).catch(() => {})
    for (let waited = 0; !settled && waited < maxMs; waited += 50) await clock.advance(50)
    expect(settled, `settled within ${maxMs} ms of fake time`).to.equal(true)
    return promise
  }

  let clock: FakeClock
  let leases: FakeLeaseStore
  let pools: FakePoolStatusStore
  let logger: FakeLogger
  let probe: ScriptedProbe
  let controller: AbortController

  beforeEach(() => {
    clock = new FakeClock()
    leases = new FakeLeaseStore()
    pools = new FakePoolStatusStore()
    logger = new FakeLogger()
    probe = new ScriptedProbe()
    controller = new AbortController()
    pools.put({
      apiVersion: 'compute.ironcore.dev/v1alpha1',
      kind: 'MachinePool',
      metadata: {name: NAME, generation: 4},
      status: {state: 'Ready', conditions: [SCHEDULED]},
    })
  })
  afterEach(() => controller.abort())

  function heartbeat(over: Partial<HeartbeatOptions> = {}): Heartbeat {
    return new Heartbeat({
      kind: KIND,
      poolName: NAME,
      holderIdentity: defaultHolderIdentity(NAME, 'uuid-1'),
      probe,
      leases,
      pools,
      clock,
      logger,
      ...over,
    })
  }

  const ready = () => pools.peek(NAME)?.status?.conditions?.find((c) => c.type === 'Ready')

  it('success: Ready True/HeartbeatReceived with the kind message and the pool generation', async () => {
    const result = await heartbeat().tickOnce(controller.signal)
    expect(ready()).to.deep.include({
      status: 'True',
      reason: 'HeartbeatReceived',
      message: 'machine runtime status probe succeeded',
      observedGeneration: 4,
    })
    expect(result.probe).to.deep.equal({ok: true, durationMs: 0})
    expect(result.lease.outcome).to.equal('created')
    expect(result.ready).to.deep.equal({outcome: 'written', status: 'True'})
    expect(pools.peek(NAME)?.status?.conditions?.[0]).to.deep.equal(SCHEDULED)
  })

  it("failure: Ready False/RuntimeUnreachable with the probe's error text", async () => {
    probe.answer = 'fail'
    const result = await heartbeat().tickOnce(controller.signal)
    expect(ready()).to.deep.include({status: 'False', reason: 'RuntimeUnreachable', message: probe.error, observedGeneration: 4})
    expect(result.probe).to.deep.include({ok: false, error: probe.error})
    expect(result.lease.outcome).to.equal('created')
  })

  it('records an Event of each Ready change (Warning when not True), and none for a tick that changes nothing', async () => {
    const events: PoolEvent[] = []
    const beat = heartbeat({events: {record: (event) => events.push(event)}})
    await beat.tickOnce(controller.signal)
    await beat.tickOnce(controller.signal)
    probe.answer = 'fail'
    await beat.tickOnce(controller.signal)
    expect(events.map((e) => `${e.type} ${e.reason} ${e.kind}/${e.name}: ${e.message}`)).to.deep.equal([
      'Normal MachinePoolReady MachinePool/p1: machine runtime status probe succeeded',
      `Warning MachinePoolNotReady MachinePool/p1: ${probe.error}`,
    ])
  })

  it('a probe that ignores its signal: Ready False at the status timeout, and the Lease still renewed', async () => {
    probe.answer = 'hang'
    let result: TickResult | undefined
    void heartbeat({statusTimeoutMs: 5_000})
      .tickOnce(controller.signal)
      .then((r) => (result = r))
    await clock.advance(4_999)
    expect(result, 'tick ended before the status timeout').to.be.undefined
    expect(leases.peek(NAME), 'Lease written before the probe ended').to.be.undefined
    await clock.advance(1)
    expect(result?.probe).to.deep.equal({
      ok: false,
      error: '/machine.v1alpha1.MachineRuntime/Status DEADLINE_EXCEEDED: no answer within 5s',
      durationMs: 5_000,
    })
    expect(result?.lease.outcome).to.equal('created')
    expect(leases.peek(NAME)?.spec.renewTime).to.equal('2026-01-01T00:00:05.000000Z')
    expect(ready()).to.deep.include({status: 'False', reason: 'RuntimeUnreachable', message: '/machine.v1alpha1.MachineRuntime/Status DEADLINE_EXCEEDED: no answer within 5s'})
    expect(clock.pending, 'timers left behind').to.equal(0)
  })

  it("the probe's signal aborts at the status timeout, and the deadline's text wins over the probe's", async () => {
    probe.answer = 'honour-signal'
    const tick = heartbeat({statusTimeoutMs: 2_000}).tickOnce(controller.signal)
    await clock.advance(2_000)
    const result = await tick
    expect(probe.signals[0]?.aborted).to.be.true
    expect(result.probe.error).to.equal('/machine.v1alpha1.MachineRuntime/Status DEADLINE_EXCEEDED: no answer within 2s')
  })

  it('a tick that changes nothing writes nothing to the pool (resourceVersion unchanged)', async () => {
    const beat = heartbeat()
    await beat.tickOnce(controller.signal)
    const version = pools.peek(NAME)?.metadata.resourceVersion
    pools.script.forbid('writeConditions')
    await clock.advance(10_000)
    const result = await beat.tickOnce(controller.signal)
    expect(result.ready).to.deep.equal({outcome: 'unchanged', status: 'True'})
    expect(pools.peek(NAME)?.metadata.resourceVersion).to.equal(version)
  })

  it('steady state with a pool cache: one Lease write, no Lease read, no pool read or write', async () => {
    const beat = heartbeat({getPool: () => pools.peek(NAME)})
    await beat.tickOnce(controller.signal)
    leases.script.forbid('get', 'create')
    pools.script.forbid('get', 'writeConditions')
    const leaseCalls = leases.script.log.length
    await clock.advance(10_000)
    const result = await beat.tickOnce(controller.signal)
    expect(result.lease.outcome).to.equal('renewed')
    expect(result.ready.outcome).to.equal('unchanged')
    expect(leases.script.log.slice(leaseCalls)).to.deep.equal(['update'])
  })

  it('without a cache, reads the pool once per tick', async () => {
    const beat = heartbeat()
    await beat.tickOnce(controller.signal)
    const reads = pools.script.calls('get')
    await beat.tickOnce(controller.signal)
    expect(pools.script.calls('get') - reads).to.equal(1)
  })

  it('a cache that does not have the pool falls back to reading it', async () => {
    const result = await heartbeat({getPool: () => undefined}).tickOnce(controller.signal)
    expect(result.ready.outcome).to.equal('written')
    expect(pools.script.calls('get')).to.equal(1)
  })

  it("a new generation is published: observedGeneration follows the pool's", async () => {
    const beat = heartbeat()
    await beat.tickOnce(controller.signal)
    const pool = pools.peek(NAME) as Pool
    pools.put({...pool, metadata: {...pool.metadata, generation: 5}})
    const result = await beat.tickOnce(controller.signal)
    expect(result.ready.outcome).to.equal('written')
    expect(ready()?.observedGeneration).to.equal(5)
  })

  it("overwrites the controller's Unknown on the next tick", async () => {
    const beat = heartbeat({getPool: () => pools.peek(NAME)})
    await beat.tickOnce(controller.signal)
    const pool = pools.peek(NAME) as Pool
    pools.put({
      ...pool,
      status: {...pool.status, conditions: [SCHEDULED, {type: 'Ready', status: 'Unknown', reason: KIND.unknownReason, message: KIND.unknownMessage}]},
    })
    const result = await beat.tickOnce(controller.signal)
    expect(result.ready.outcome).to.equal('written')
    expect(ready()?.status).to.equal('True')
  })

  it('pool missing: logs "pool <name> not found" with the kind, and still renews the Lease', async () => {
    pools.delete(NAME)
    const result = await heartbeat().tickOnce(controller.signal)
    expect(result.ready.outcome).to.equal('not-found')
    expect(result.lease.outcome).to.equal('created')
    expect(leases.peek(NAME)).to.not.be.undefined
    const errors = logger.at('error')
    expect(errors.map((e) => e.msg)).to.deep.equal(['pool p1 not found'])
    expect(errors[0]?.obj).to.include({kind: 'machine', pool: NAME})
  })

  it('a Lease write refused by the API is logged with verb and resource; Ready is still published', async () => {
    const beat = heartbeat()
    await beat.tickOnce(controller.signal)
    // Refused for longer than the Lease duration: every retry fails, the tick ends with the error.
    leases.script.failNext('update', () => new ForbiddenError('leases.coordination.k8s.io "p1" is forbidden'), 1_000)
    probe.answer = 'fail'
    const result = await untilSettled(beat.tickOnce(controller.signal))
    expect(result.lease).to.deep.include({outcome: 'error', action: `update lease ${LEASE}`})
    expect(result.lease.error).to.be.instanceOf(ForbiddenError)
    const [entry] = logger.at('error')
    expect(entry?.msg).to.equal(`update lease ${LEASE} failed: leases.coordination.k8s.io "p1" is forbidden`)
    expect(entry?.obj).to.include({kind: 'machine', pool: NAME, action: `update lease ${LEASE}`})
    expect(ready()?.status).to.equal('False')
  })

  it('a renewal the API did not answer skips the tick\'s Ready write (it would wait for the same API and push the next tick off its slot); the next tick publishes it', async () => {
    const beat = heartbeat({leaseDurationMs: 10_000, intervalMs: 10_000})
    await beat.tickOnce(controller.signal)
    // Every attempt of the tick (5 at once, then the backoff within its budget) goes unanswered.
    leases.script.failNext('update', () => new Error('update lease: no answer within 10000 ms'), 1_000)
    probe.answer = 'fail'
    const reads = pools.script.calls('get')
    const result = await untilSettled(beat.tickOnce(controller.signal))
    expect(result.lease.outcome).to.equal('error')
    expect(result.ready.outcome).to.equal('skipped')
    expect(pools.script.calls('get'), 'no pool read while the API does not answer').to.equal(reads)
    expect(ready()?.status).to.equal('True')
    leases.script.stopFailing('update')
    await clock.advance(10_000)
    const next = await untilSettled(beat.tickOnce(controller.signal))
    expect(next.lease.outcome).to.equal('renewed')
    expect(ready()?.status).to.equal('False')
  })

  it('a failed Lease renewal asks the edge to drop its pooled connections; a good one does not', async () => {
    const failures: unknown[] = []
    const beat = heartbeat({onLeaseRenewalFailed: (error) => failures.push(error)})
    await beat.tickOnce(controller.signal)
    expect(failures).to.deep.equal([])
    const timeout = new Error('update lease: no answer within 10s')
    // One failed attempt is retried at once and renews: no repeated failure yet.
    leases.script.failNext('update', () => timeout)
    expect((await beat.tickOnce(controller.signal)).lease.outcome).to.equal('renewed')
    expect(failures).to.deep.equal([])
    // All attempts of one call failing is: the edge drops its connections, and the backoff's retry renews.
    leases.script.failNext('update', () => timeout, LEASE_WRITE_ATTEMPTS)
    expect((await untilSettled(beat.tickOnce(controller.signal))).lease.outcome).to.equal('renewed')
    expect(failures).to.deep.equal([timeout])
    await beat.tickOnce(controller.signal)
    expect(failures).to.have.length(1)
  })

  it('a pool read or status write refused by the API is logged with verb and resource', async () => {
    pools.script.failNext('get', () => new ForbiddenError('cannot get machinepools'))
    const first = await heartbeat().tickOnce(controller.signal)
    expect(first.ready).to.deep.include({outcome: 'error', action: `get machinepool ${NAME}`})

    pools.script.failNext('writeConditions', () => new ForbiddenError('cannot update machinepools/status'))
    const second = await heartbeat().tickOnce(controller.signal)
    expect(second.ready).to.deep.include({outcome: 'error', action: `update machinepool/status ${NAME}`})
    expect(logger.at('error').map((e) => e.msg)).to.deep.equal([
      `get machinepool ${NAME} failed: cannot get machinepools`,
      `update machinepool/status ${NAME} failed: cannot update machinepools/status`,
    ])
  })

  it('run(): ticks at once and every interval; API errors are logged and the loop goes on', async () => {
    // Every attempt of the first call fails, and the Lease duration is too short for a backoff's retry.
    leases.script.failNext('create', () => new ForbiddenError('forbidden'), LEASE_WRITE_ATTEMPTS)
    const results: TickResult[] = []
    const done = heartbeat({intervalMs: 10_000, leaseDurationMs: 10_050, random: () => 0}).run(controller.signal, (r) => results.push(r))
    await flushPromises()
    // The backoff's first wait (100 ms) still fits the budget: the retry creates the Lease.
    await clock.advance(100)
    expect(results.map((r) => r.lease.outcome)).to.deep.equal(['created'])
    expect(logger.at('error').map((e) => e.msg)).to.deep.equal([`create lease ${LEASE} failed: forbidden`])
    // The next tick keeps the first tick's cadence (10 s from its start), not 10 s from its end.
    await clock.advance(9_899)
    expect(results).to.have.length(1)
    await clock.advance(1)
    expect(results.map((r) => r.lease.outcome)).to.deep.equal(['created', 'renewed'])
    // Refused for good: the third tick (at 20 s, past the Lease's 10.05 s) retries within its own interval and ends before the fourth is due.
    leases.script.failNext('update', () => new ForbiddenError('forbidden'), 1_000)
    await clock.advance(19_990)
    expect(results.map((r) => r.lease.outcome)).to.deep.equal(['created', 'renewed', 'error'])
    controller.abort()
    await done
    expect(clock.pending).to.equal(0)
  })

  it('renewBackoffMs: 200 ms doubling to 7 s, each wait in the upper half of its step', () => {
    expect([1, 2, 3, 6, 7, 12, 40].map((n) => renewBackoffMs(n, () => 0))).to.deep.equal([100, 200, 400, 3_200, RENEW_BACKOFF_MAX_MS / 2, 3_500, 3_500])
    expect(renewBackoffMs(1, () => 0.999_999)).to.be.closeTo(200, 0.01)
    expect(renewBackoffMs(9, () => 0.999_999)).to.be.closeTo(RENEW_BACKOFF_MAX_MS, 0.01)
  })

  it('a renewal whose attempts at once all fail is retried after a backoff within the same tick, one attempt a step, and renews', async () => {
    const beat = heartbeat({random: () => 0})
    await beat.tickOnce(controller.signal)
    leases.script.failNext('update', () => new Error('update lease: no answer within 10s'), LEASE_WRITE_ATTEMPTS + 2)
    const before = leases.script.calls('update')
    const tick = beat.tickOnce(controller.signal)
    await flushPromises()
    expect(leases.script.calls('update') - before).to.equal(LEASE_WRITE_ATTEMPTS)
    await clock.advance(99)
    expect(leases.script.calls('update') - before).to.equal(LEASE_WRITE_ATTEMPTS)
    // After the first burst, each backoff step (100, 200, 400 ms at random 0) tries once.
    await clock.advance(1)
    expect(leases.script.calls('update') - before).to.equal(LEASE_WRITE_ATTEMPTS + 1)
    await clock.advance(200)
    expect(leases.script.calls('update') - before).to.equal(LEASE_WRITE_ATTEMPTS + 2)
    await clock.advance(400)
    const result = await tick
    expect(result.lease.outcome).to.equal('renewed')
    expect(leases.script.calls('update') - before).to.equal(LEASE_WRITE_ATTEMPTS + 3)
    expect(leases.peek(NAME)?.spec.renewTime).to.equal(new Date(clock.wall()).toISOString().replace('Z', '000Z'))
  })

  it('retries stop within the Lease duration, counted from the last renewal that succeeded', async () => {
    const beat = heartbeat({random: () => 0, leaseDurationMs: 40_000})
    await beat.tickOnce(controller.signal)
    const renewedAt = clock.monotonic()
    leases.script.failNext('update', () => new Error('connection reset'), 10_000)
    await clock.advance(10_000)
    const result = await untilSettled(beat.tickOnce(controller.signal))
    expect(result.lease.outcome).to.equal('error')
    // No attempt was started past the budget, and the tick gave up before it ran out.
    expect(clock.monotonic()).to.be.at.most(renewedAt + 40_000 + 50)
    expect(clock.monotonic()).to.be.above(renewedAt + 40_000 - RENEW_BACKOFF_MAX_MS - 50)
    // A later tick, past the Lease, retries within its own interval, at the backoff reached so far
    // (3.5-7 s), one attempt a step: the outage is not stormed.
    await clock.advance(10_000)
    const calls = leases.script.calls('update')
    const tickStart = clock.monotonic()
    await untilSettled(beat.tickOnce(controller.signal))
    expect(clock.monotonic()).to.be.at.most(tickStart + 10_000)
    expect(leases.script.calls('update') - calls).to.be.within(1, 3)
  })

  it('run(): abort during a probe ends the tick without writing, and run() resolves', async () => {
    probe.answer = 'honour-signal'
    const results: TickResult[] = []
    const done = heartbeat().run(controller.signal, (r) => results.push(r))
    await flushPromises()
    controller.abort()
    await done
    expect(results).to.have.length(1)
    expect(results[0]?.lease.outcome).to.equal('skipped')
    expect(results[0]?.ready.outcome).to.equal('skipped')
    expect(leases.peek(NAME)).to.be.undefined
    expect(ready()).to.be.undefined
    expect(clock.pending).to.equal(0)
  })

  it('writes leaseDurationSeconds from the lease duration, rounded up to whole seconds', async () => {
    await heartbeat({leaseDurationMs: 40_500}).tickOnce(controller.signal)
    expect(leases.peek(NAME)?.spec.leaseDurationSeconds).to.equal(41)
  })

  it('yields the Lease to another live holder: says so once (error log naming it, a Warning Event), writes no Ready, and beats again once the Lease expires', async () => {
    const events: PoolEvent[] = []
    pools.put({...pools.peek(NAME)!, metadata: {...pools.peek(NAME)!.metadata, uid: 'uid-p1'}})
    const beat = heartbeat({events: {record: (event) => events.push(event)}})
    await beat.tickOnce(controller.signal)
    const rival = () => {
      const current = leases.peek(NAME)!
      leases.put({...current, spec: {...current.spec, holderIdentity: 'machinepoollet-1', leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:00.000000Z'}})
    }
    rival()
    const writes = pools.script.calls('writeConditions')
    probe.answer = 'fail' // a change of Ready it would write, were it the holder
    const results: TickResult[] = []
    for (let i = 0; i < 3; i++) {
      results.push(await beat.tickOnce(controller.signal))
      await clock.advance(10_000)
      rival()
    }
    expect(results.map((r) => `${r.lease.outcome} ${r.lease.holder} ${r.ready.outcome}`)).to.deep.equal(Array(3).fill('yielded machinepoollet-1 yielded'))
    expect(pools.script.calls('writeConditions')).to.equal(writes)
    expect(beat.yieldedTo()).to.equal('machinepoollet-1')
    const said = logger.entries.filter((e) => e.level === 'error')
    expect(said).to.have.length(1)
    expect(said[0]?.msg).to.equal(`Lease ${LEASE} is renewed by another holder, machinepoollet-1, since this poollet (${defaultHolderIdentity(NAME, 'uuid-1')}) took it: this poollet stopped renewing it and writing Ready, and takes it again only once it is left unrenewed for 40s`)
    expect(events.map((e) => `${e.type} ${e.reason} ${e.kind}/${e.name} ${e.uid}`)).to.deep.equal(['Normal MachinePoolReady MachinePool/p1 uid-p1', 'Warning LeaseYielded MachinePool/p1 uid-p1'])
    // The rival stops: 40 s after its last renewal was seen (by this tick), the Lease is this poollet's again.
    expect((await beat.tickOnce(controller.signal)).lease.outcome).to.equal('yielded')
    await clock.advance(39_999)
    expect((await beat.tickOnce(controller.signal)).lease.outcome).to.equal('yielded')
    await clock.advance(1)
    const back = await beat.tickOnce(controller.signal)
    expect(back.lease).to.deep.include({outcome: 'took-over', previousHolder: 'machinepoollet-1'})
    expect(back.ready.outcome).to.equal('written')
    expect(beat.yieldedTo()).to.equal(undefined)
  })

  it('on a kind whose API has no conditions: logs and records an Event at the first probe and at each change of its outcome, never writes the pool', async () => {
    const events: PoolEvent[] = []
    const beat = heartbeat({kind: POOL_KINDS.bucket, plan: {conditions: false, conditionFields: []}, events: {record: (event) => events.push(event)}})
    const outcomes: boolean[] = [true, true, false, false, false, true, true, false]
    for (const ok of outcomes) {
      probe.answer = ok ? 'ok' : 'fail'
      expect((await beat.tickOnce(controller.signal)).ready.outcome).to.equal('not-writable')
    }
    expect(events.map((e) => `${e.type} ${e.reason}: ${e.message}`)).to.deep.equal([
      'Normal BucketPoolProbeSucceeded: bucket runtime status probe succeeded',
      `Warning BucketPoolProbeFailed: ${probe.error}`,
      'Normal BucketPoolProbeSucceeded: bucket runtime status probe succeeded again',
      `Warning BucketPoolProbeFailed: ${probe.error}`,
    ])
    const lines = logger.entries.filter((e) => e.msg.startsWith(`pool ${NAME}: `)).map((e) => `${e.level} ${e.msg}`)
    expect(lines).to.deep.equal([
      `info pool ${NAME}: bucket runtime status probe succeeded (this API has no conditions for bucketpools: recorded as an Event)`,
      `warn pool ${NAME}: runtime probe failed: ${probe.error} (this API has no conditions for bucketpools: recorded as an Event)`,
      `info pool ${NAME}: bucket runtime status probe succeeded again (this API has no conditions for bucketpools: recorded as an Event)`,
      `warn pool ${NAME}: runtime probe failed: ${probe.error} (this API has no conditions for bucketpools: recorded as an Event)`,
    ])
    expect(pools.script.calls('writeConditions')).to.equal(0)
  })
})
