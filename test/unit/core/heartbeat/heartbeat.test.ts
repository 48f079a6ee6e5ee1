import {expect} from 'chai'
import {getEventListeners} from 'node:events'
import {sleep} from '../../../../src/core/clock.ts'
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
    expect(said[0]?.obj).to.include({kind: 'machine', pool: NAME, lease: LEASE, holder: 'machinepoollet-1', holderIdentity: defaultHolderIdentity(NAME, 'uuid-1')})
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
    const said = logger.entries.filter((e) => e.msg.startsWith(`pool ${NAME}: `)).map((e) => e.obj)
    expect(said[0]).to.include({kind: 'bucket', pool: NAME, probe: 'ok'})
    expect(said[1]).to.include({kind: 'bucket', pool: NAME, probe: 'failed', error: probe.error})
    expect(pools.script.calls('writeConditions')).to.equal(0)
  })

  describe('the rules a mutation run found undefended (issue 30)', () => {
    it('a renewal refused for a whole budget: 5 attempts at once, then one a step at 200 ms doubling to 7 s (upper half: 100 ms … 3.5 s at random 0), each failure logged with its retry and the last without; the edge told of each', async () => {
      const failures: unknown[] = []
      const beat = heartbeat({random: () => 0, leaseDurationMs: 10_000, intervalMs: 10_000, onLeaseRenewalFailed: (error) => failures.push(error)})
      await beat.tickOnce(controller.signal)
      leases.script.failNext('update', () => new ForbiddenError('forbidden'), 1_000)
      const before = leases.script.calls('update')
      const result = await untilSettled(beat.tickOnce(controller.signal))
      expect(result.lease.outcome).to.equal('error')
      const said = logger.at('error').map((e) => ({attempts: e.obj.attempts, retryInMs: e.obj.retryInMs}))
      expect(said).to.deep.equal([
        ...[100, 200, 400, 800, 1_600, 3_200, 3_500].map((retryInMs, i) => ({attempts: i === 0 ? LEASE_WRITE_ATTEMPTS : 1, retryInMs})),
        {attempts: 1, retryInMs: undefined},
      ])
      expect(leases.script.calls('update') - before).to.equal(LEASE_WRITE_ATTEMPTS + 7)
      expect(failures).to.have.length(8)
    })

    it('a backoff wait that would end exactly at the budget\'s end is not waited (the budget is exclusive)', async () => {
      // Budget 9.8 s: the sixth step's retry at 6.3 s would wait 3.5 s, to 9.8 s exactly.
      const beat = heartbeat({random: () => 0, leaseDurationMs: 9_800, intervalMs: 9_800})
      await beat.tickOnce(controller.signal)
      leases.script.failNext('update', () => new ForbiddenError('forbidden'), 1_000)
      const before = leases.script.calls('update')
      await untilSettled(beat.tickOnce(controller.signal))
      expect(leases.script.calls('update') - before).to.equal(LEASE_WRITE_ATTEMPTS + 6)
    })

    it('a yield to a holder that wrote no duration is said with this poollet\'s own', async () => {
      const beat = heartbeat({leaseDurationMs: 30_000})
      await beat.tickOnce(controller.signal)
      const current = leases.peek(NAME)!
      leases.put({...current, spec: {holderIdentity: 'machinepoollet-1', renewTime: '2026-01-01T00:00:00.000000Z'}})
      expect((await beat.tickOnce(controller.signal)).lease.outcome).to.equal('yielded')
      expect(logger.at('error')[0]?.msg).to.match(/takes it again only once it is left unrenewed for 30s$/)
    })

    it('times the probe and the renewal on the monotonic clock (durationMs), answered or failed', async () => {
      const slow = {answer: 'ok', probe: async () => {
        await sleep(clock, 300)
        if (slow.answer !== 'ok') throw new ProbeError('no runtime')
      }}
      const beat = heartbeat({probe: slow, random: () => 0})
      await clock.advance(1_000) // durations are differences, not readings of the clock
      const first = beat.tickOnce(controller.signal)
      await clock.advance(300)
      expect((await first).probe).to.deep.equal({ok: true, durationMs: 300})
      slow.answer = 'fail'
      leases.script.failNext('update', () => new Error('update lease: no answer within 10s'), LEASE_WRITE_ATTEMPTS)
      const second = untilSettled(beat.tickOnce(controller.signal))
      const result = await second
      expect(result.probe).to.deep.equal({ok: false, error: 'no runtime', durationMs: 300})
      // The first call's 5 attempts failed at once; the backoff's retry 100 ms later renewed.
      expect(result.lease).to.deep.include({outcome: 'renewed', durationMs: 100})
    })

    it('a probe that fails with no text publishes "runtime probe failed"', async () => {
      const result = await heartbeat({probe: {probe: () => Promise.reject(new Error(''))}}).tickOnce(controller.signal)
      expect(result.probe).to.deep.include({ok: false, error: 'runtime probe failed'})
      expect(ready()).to.deep.include({status: 'False', message: 'runtime probe failed'})
    })

    it('a tick on a signal already aborted waits for no probe: failed at once, nothing written, and the probe told', async () => {
      probe.answer = 'hang'
      controller.abort()
      let result: TickResult | undefined
      void heartbeat().tickOnce(controller.signal).then((r) => (result = r))
      await flushPromises()
      expect(result?.probe.ok, 'settled without the clock moving').to.equal(false)
      expect(result?.lease.outcome).to.equal('skipped')
      expect(probe.signals[0]?.aborted).to.equal(true)
      expect(leases.peek(NAME)).to.be.undefined
    })

    it('shutdown during the renewal: the Ready write is skipped', async () => {
      probe.answer = 'fail'
      leases.script.beforeCall('create', 1, () => controller.abort())
      const result = await heartbeat().tickOnce(controller.signal)
      expect(result.lease.outcome).to.equal('created')
      expect(result.ready.outcome).to.equal('skipped')
      expect(pools.script.calls('writeConditions')).to.equal(0)
    })

    it('shutdown during a backoff wait ends the tick: no try after it', async () => {
      const beat = heartbeat({random: () => 0})
      await beat.tickOnce(controller.signal)
      leases.script.failNext('update', () => new Error('connection reset'), 1_000)
      const before = leases.script.calls('update')
      const tick = beat.tickOnce(controller.signal)
      await flushPromises()
      expect(leases.script.calls('update') - before).to.equal(LEASE_WRITE_ATTEMPTS)
      controller.abort()
      const result = await tick
      expect(result.lease.outcome).to.equal('error')
      expect(leases.script.calls('update') - before).to.equal(LEASE_WRITE_ATTEMPTS)
    })

    it('leaves no listener on the caller\'s signal after its ticks', async () => {
      const beat = heartbeat()
      for (let i = 0; i < 3; i++) await beat.tickOnce(controller.signal)
      expect(getEventListeners(controller.signal, 'abort')).to.have.length(0)
    })

    it('a yield is no renewal: past the Lease duration of yielding, a failing tick retries within its own interval only; heartbeat resumed is said once, and a predecessor\'s takeover says nothing of it', async () => {
      leases.put({name: NAME, namespace: KIND.leaseNamespace, spec: {holderIdentity: 'p1_predecessor', leaseDurationSeconds: 40, leaseTransitions: 0}})
      pools.put({...pools.peek(NAME)!, metadata: {...pools.peek(NAME)!.metadata, uid: 'uid-p1'}})
      const events: PoolEvent[] = []
      const beat = heartbeat({random: () => 0, getPool: () => pools.peek(NAME), events: {record: (event) => events.push(event)}})
      expect((await beat.tickOnce(controller.signal)).lease.outcome).to.equal('took-over')
      const resumed = () => logger.at('info').filter((e) => e.msg === `pool ${NAME}: the Lease is this poollet's again, heartbeat resumed`)
      expect(resumed()).to.have.length(0)
      const rival = () => {
        const current = leases.peek(NAME)!
        leases.put({...current, spec: {...current.spec, holderIdentity: 'machinepoollet-1', leaseDurationSeconds: 40, renewTime: new Date(clock.wall()).toISOString()}})
      }
      const reads = pools.script.calls('get')
      for (let i = 0; i < 6; i++) {
        await clock.advance(10_000)
        rival()
        expect((await beat.tickOnce(controller.signal)).lease.outcome).to.equal('yielded')
      }
      expect(pools.script.calls('get'), 'the yield Event takes the uid from the cache').to.equal(reads)
      expect(events.filter((e) => e.reason === 'LeaseYielded').map((e) => `${e.apiVersion} ${e.kind} ${e.uid}`)).to.deep.equal(['compute.ironcore.dev/v1alpha1 MachinePool uid-p1'])
      await clock.advance(10_000)
      leases.script.failNext('get', () => new Error('connection reset'), 1_000)
      const tickStart = clock.monotonic()
      expect((await untilSettled(beat.tickOnce(controller.signal))).lease.outcome).to.equal('error')
      expect(clock.monotonic()).to.be.at.most(tickStart + 10_000)
      leases.script.stopFailing('get')
      await clock.advance(40_000)
      expect((await untilSettled(beat.tickOnce(controller.signal))).lease.outcome).to.equal('took-over')
      expect(resumed()).to.have.length(1)
      expect(resumed()[0]?.obj).to.include({kind: 'machine', pool: NAME, holder: 'machinepoollet-1'})
    })

    it('a renewal refused past the Lease duration still retries within its own tick\'s interval (3 tries at the 3.5 s step reached)', async () => {
      const beat = heartbeat({random: () => 0, leaseDurationMs: 40_000})
      await beat.tickOnce(controller.signal)
      leases.script.failNext('update', () => new Error('connection reset'), 10_000)
      await clock.advance(10_000)
      await untilSettled(beat.tickOnce(controller.signal))
      await clock.advance(10_000)
      const calls = leases.script.calls('update')
      await untilSettled(beat.tickOnce(controller.signal))
      expect(leases.script.calls('update') - calls).to.equal(3)
    })

    it('run(): a throwing onTick is logged and the loop goes on', async () => {
      let ticks = 0
      const done = heartbeat({intervalMs: 10_000, random: () => 0}).run(controller.signal, () => {
        ticks++
        throw new Error('metrics exploded')
      })
      await flushPromises()
      await clock.advance(10_000)
      expect(ticks).to.equal(2)
      const failed = logger.at('error').filter((e) => e.msg === 'heartbeat tick failed')
      expect(failed).to.have.length(2)
      expect(failed[0]?.obj).to.include({kind: 'machine', pool: NAME})
      controller.abort()
      await done
    })

    it('a throwing onLeaseRenewalFailed is logged; the tick still ends', async () => {
      const beat = heartbeat({leaseDurationMs: 10_000, intervalMs: 10_000, onLeaseRenewalFailed: () => {
        throw new Error('no pool to drop')
      }})
      leases.script.failNext('create', () => new ForbiddenError('forbidden'), 1_000)
      expect((await untilSettled(beat.tickOnce(controller.signal))).lease.outcome).to.equal('error')
      const failed = logger.at('error').filter((e) => e.msg === 'onLeaseRenewalFailed failed')
      expect(failed.length).to.be.greaterThan(0)
      expect(failed[0]?.obj).to.include({kind: 'machine', pool: NAME})
    })

    it('a Ready the API did not keep is a warning with its fields, not a change: no Event', async () => {
      const events: PoolEvent[] = []
      const write = pools.writeConditions.bind(pools)
      pools.writeConditions = async (...args) => {
        const written = await write(...args)
        return {...written, status: {...written.status, conditions: []}}
      }
      const result = await heartbeat({events: {record: (event) => events.push(event)}}).tickOnce(controller.signal)
      expect(result.ready).to.deep.equal({outcome: 'not-held', status: 'True'})
      const [line] = logger.at('warn')
      expect(line?.msg).to.equal(`pool ${NAME} Ready=True was written, but the API did not keep it`)
      expect(line?.obj).to.include({kind: 'machine', pool: NAME, status: 'True', reason: 'HeartbeatReceived'})
      expect(events).to.deep.equal([])
    })

    it('says each Ready change at info with its fields, and spells the Event\'s apiVersion from the kind', async () => {
      const events: PoolEvent[] = []
      await heartbeat({events: {record: (event) => events.push(event)}}).tickOnce(controller.signal)
      const [line] = logger.at('info').filter((e) => e.msg.includes('Ready='))
      expect(line?.msg).to.equal(`pool ${NAME} Ready=True (HeartbeatReceived)`)
      expect(line?.obj).to.include({kind: 'machine', pool: NAME, status: 'True', reason: 'HeartbeatReceived', message: 'machine runtime status probe succeeded'})
      expect(events[0]?.apiVersion).to.equal('compute.ironcore.dev/v1alpha1')
    })
  })
})
