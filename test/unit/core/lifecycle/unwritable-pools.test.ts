/**
 * The review's fifth row (issue 26), on the production wiring (kindEngine with the real Sight and
 * RequestLimiter) at production timings on the fake clock: 5 dead pools whose Ready=Unknown write
 * fails again and again (a webhook's 500 after 2 s), the rest renewing every 10 s. Before, each bad
 * pool gave one good confirm and one failed write, exactly the request rule's 50 %: the controller was
 * blind over and over, and a pool that died later was still Ready=True after 2 h.
 */
import {expect} from 'chai'
import {kindEngine} from '../../../../src/core/lifecycle/kind-engine.ts'
import {RequestLimiter} from '../../../../src/core/lifecycle/request-limiter.ts'
import {Sight, sightTimings} from '../../../../src/core/lifecycle/sight/sight.ts'
import {POOL_KINDS, READY_CONDITION} from '../../../../src/core/pool-kinds.ts'
import type {PoolStatusStore} from '../../../../src/core/ports.ts'
import type {Lease, Pool, PoolCondition} from '../../../../src/core/types.ts'
import {FakeClock} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'
import {FakePoolStatusStore} from '../../../support/fake-stores.ts'
import {RecordingEvents} from '../../../support/lifecycle-fixture.ts'

const KIND = POOL_KINDS.machine
const GRACE_MS = 50_000

function later<T>(clock: FakeClock, ms: number, answer: () => T | Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => clock.setTimer(ms, () => void Promise.resolve().then(answer).then(resolve, reject)))
}

describe('controller: pools whose writes fail hold no other pool (production wiring)', () => {
  it('5 dead pools whose Unknown write fails with 500 again and again: a pool that dies later is marked within grace + 15 s, no live pool marked, no blind spell after their first failures', async () => {
    const clock = new FakeClock()
    const logger = new FakeLogger()
    const inner = new FakePoolStatusStore()
    const bad = new Set(['bad-0', 'bad-1', 'bad-2', 'bad-3', 'bad-4'])
    const live = Array.from({length: 20}, (_, i) => `live-${i}`)
    const leases = new Map<string, Lease>()
    const store: PoolStatusStore = {
      get: (name) => later(clock, 2, () => inner.peek(name)),
      writeConditions: (name, rv, conditions: PoolCondition[]) =>
        bad.has(name)
          ? later(clock, 2_000, () => Promise.reject(new Error(`update machinepools/status ${name}: HTTP 500: failed calling webhook`)))
          : later(clock, 2, () => inner.writeConditions(name, rv, conditions)),
    }
    const sight = new Sight({clock, logger, probe: () => later(clock, 2, () => undefined), ...sightTimings(GRACE_MS)})
    const spells: number[] = []
    const {lifecycle, cacheState} = kindEngine({
      kind: KIND,
      clock,
      sight,
      caches: ['pools', 'leases'],
      limiter: new RequestLimiter(clock),
      store,
      getPool: (name) => inner.peek(name),
      getLease: (name) => leases.get(name),
      confirmLease: (name) => later(clock, 2, () => leases.get(name)),
      confirmTimeoutMs: sightTimings(GRACE_MS).probeTimeoutMs,
      events: new RecordingEvents(),
      logger,
      gracePeriodMs: GRACE_MS,
      viewObserver: {changed: (whole) => void (whole || spells.push(clock.monotonic()))},
    })
    const stop = new AbortController()
    const sighted = sight.run(stop.signal)
    cacheState('pools', undefined)
    cacheState('leases', undefined)
    lifecycle.setLeader(true)
    const delivered = new Map<string, string | undefined>()
    const deliver = () => {
      for (const name of [...bad, ...live]) {
        const pool = inner.peek(name)!
        if (delivered.get(name) === pool.metadata.resourceVersion) continue
        delivered.set(name, pool.metadata.resourceVersion)
        lifecycle.poolUpserted(pool)
      }
    }
    for (const name of [...bad, ...live]) {
      const ready: PoolCondition = {type: READY_CONDITION, status: 'True', reason: 'HeartbeatReceived', message: KIND.readyMessage, observedGeneration: 1}
      const pool: Pool = {apiVersion: `${KIND.group}/${KIND.version}`, kind: KIND.kind, metadata: {name, uid: `uid-${name}`, generation: 1}, status: {conditions: [ready]}}
      inner.put(pool)
      leases.set(name, {name, namespace: KIND.leaseNamespace, spec: {holderIdentity: `${name}_x`, renewTime: 'start'}})
      lifecycle.leaseUpserted(leases.get(name)!)
    }
    deliver()
    const diesAt = 10 * 60_000
    const status = (name: string) => inner.peek(name)?.status?.conditions?.find((c) => c.type === READY_CONDITION)?.status
    let markedAt: number | undefined
    for (let t = 1_000; t <= diesAt + 2 * 60_000; t += 1_000) {
      await clock.advance(1_000)
      // Live pools renew every 10 s at their own phase; live-0 dies at diesAt.
      live.forEach((name, i) => {
        if ((t / 1_000 + i) % 10 !== 0 || (name === 'live-0' && t > diesAt)) return
        const lease: Lease = {name, namespace: KIND.leaseNamespace, spec: {holderIdentity: `${name}_x`, renewTime: String(t)}}
        leases.set(name, lease)
        lifecycle.leaseUpserted(lease)
      })
      deliver()
      for (const name of live.slice(1)) expect(status(name), `${name} at ${t} ms`).to.equal('True')
      if (markedAt === undefined && status('live-0') === 'Unknown') markedAt = t
    }
    const end = clock.monotonic()
    stop.abort()
    await clock.advance(10_000)
    await sighted
    expect(markedAt, 'live-0 marked').to.not.equal(undefined)
    expect(markedAt! - diesAt).to.be.at.most(GRACE_MS + 15_000)
    // The start-up spell, and at most one when the five first fail together; none after that, however often they retry.
    expect(spells.filter((at) => at > 0 && at <= end), 'blind spells after start-up').to.have.length.at.most(1)
    expect(spells.filter((at) => at > 2 * 60_000 && at <= end), 'blind spells once the bad pools have failed once').to.deep.equal([])
    for (const name of bad) expect(status(name)).to.equal('True')
  })
})
