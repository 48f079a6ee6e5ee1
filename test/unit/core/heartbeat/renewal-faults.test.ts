/**
 * The poollet's renewal under the review's API faults (issue 26, rows 1 and 2), on the fake clock at
 * the production timings (10 s interval, 40 s Lease, a 10 s request deadline): the real Heartbeat
 * and LeaseRenewer against a Lease store that stalls or spoils requests by a script. What the
 * controller relies on: the gap between two renewals that land stays within the Lease duration, so
 * no live pool falls silent for its grace period (50 s) while the API answers part of each interval.
 */
import {expect} from 'chai'
import {Heartbeat} from '../../../../src/core/heartbeat/heartbeat.ts'
import {POOL_KINDS} from '../../../../src/core/pool-kinds.ts'
import type {LeaseStore} from '../../../../src/core/ports.ts'
import type {Lease} from '../../../../src/core/types.ts'
import {FakeClock} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'
import {FakeLeaseStore, FakePoolStatusStore} from '../../../support/fake-stores.ts'
import {seededRandom} from '../../../support/seeded-random.ts'

const KIND = POOL_KINDS.machine
const INTERVAL_MS = 10_000
const LEASE_MS = 40_000
const REQUEST_DEADLINE_MS = 10_000
const LATENCY_MS = 3

/** A Lease store behind an API that stalls (answers only when the stall ends) or spoils requests, each bounded by the poollet's deadline. */
class FaultyLeases implements LeaseStore {
  requests = 0
  readonly renewedAt: number[] = []
  private readonly inner = new FakeLeaseStore()
  private readonly clock: FakeClock
  private readonly stallEnd: (t: number) => number | undefined
  private readonly spoilt: () => boolean
  constructor(clock: FakeClock, faults: {stallEnd?: (t: number) => number | undefined; spoilt?: () => boolean}) {
    this.clock = clock
    this.stallEnd = faults.stallEnd ?? (() => undefined)
    this.spoilt = faults.spoilt ?? (() => false)
  }
  get(name: string): Promise<Lease | undefined> {
    return this.answer(() => this.inner.get(name))
  }
  create(lease: Lease): Promise<Lease> {
    return this.answer(() => this.inner.create(lease)).then((l) => this.landed(l))
  }
  update(lease: Lease): Promise<Lease> {
    return this.answer(() => this.inner.update(lease)).then((l) => this.landed(l))
  }
  private landed(lease: Lease): Lease {
    this.renewedAt.push(this.clock.monotonic())
    return lease
  }
  private answer<T>(call: () => Promise<T>): Promise<T> {
    this.requests++
    const now = this.clock.monotonic()
    const answerAt = this.stallEnd(now) ?? now + LATENCY_MS
    const spoilt = this.spoilt()
    return new Promise<T>((resolve, reject) => {
      if (answerAt - now >= REQUEST_DEADLINE_MS) {
        this.clock.setTimer(REQUEST_DEADLINE_MS, () => reject(new Error(`no answer within ${REQUEST_DEADLINE_MS} ms`)))
        return
      }
      this.clock.setTimer(answerAt - now, () => {
        if (spoilt) reject(new Error('connection reset by peer'))
        else call().then(resolve, reject)
      })
    })
  }
}

async function beatFor(leases: FaultyLeases, clock: FakeClock, ms: number, seed: number): Promise<void> {
  const pools = new FakePoolStatusStore()
  pools.put({apiVersion: 'compute.ironcore.dev/v1alpha1', kind: 'MachinePool', metadata: {name: 'p1', generation: 1}, status: {conditions: []}})
  const heartbeat = new Heartbeat({
    kind: KIND,
    poolName: 'p1',
    holderIdentity: 'p1_x',
    probe: {probe: () => Promise.resolve()},
    leases,
    pools,
    clock,
    logger: new FakeLogger(),
    intervalMs: INTERVAL_MS,
    leaseDurationMs: LEASE_MS,
    random: seededRandom(seed),
  })
  const stop = new AbortController()
  const done = heartbeat.run(stop.signal)
  for (let t = 0; t < ms; t += 1_000) await clock.advance(1_000)
  stop.abort()
  await clock.advance(REQUEST_DEADLINE_MS)
  await done
}

/** The longest time between two renewals that landed, from the first. */
function longestGap(times: number[]): number {
  let gap = 0
  for (let i = 1; i < times.length; i++) gap = Math.max(gap, times[i]! - times[i - 1]!)
  return gap
}

describe('the poollet renews through API faults (production timings)', () => {
  for (const {stallMs, periodMs} of [
    {stallMs: 11_000, periodMs: 20_300},
    {stallMs: 14_000, periodMs: 20_000},
    {stallMs: 16_000, periodMs: 30_000},
  ]) {
    it(`kube-apiserver stalled ${stallMs / 1000} s of every ${periodMs / 1000} s for 10 min: every gap between renewals within the Lease duration`, async () => {
      const clock = new FakeClock()
      const stallEnd = (t: number) => {
        const phase = (t - 1_500) % periodMs
        return t >= 1_500 && phase < stallMs ? t - phase + stallMs : undefined
      }
      const leases = new FaultyLeases(clock, {stallEnd})
      await beatFor(leases, clock, 600_000, 7)
      expect(leases.renewedAt.length).to.be.at.least(25)
      expect(longestGap(leases.renewedAt)).to.be.below(LEASE_MS)
    })
  }

  for (const share of [0.1, 0.3, 0.5]) {
    it(`a lossy link spoiling ${share * 100} % of the poollet's requests for 1 h: every gap within the Lease duration, at most ${share < 0.5 ? 2 : 3} requests a renewal`, async () => {
      const clock = new FakeClock()
      const random = seededRandom(26)
      const leases = new FaultyLeases(clock, {spoilt: () => random() < share})
      await beatFor(leases, clock, 3_600_000, 11)
      expect(leases.renewedAt.length).to.be.at.least(340)
      expect(longestGap(leases.renewedAt)).to.be.below(LEASE_MS)
      expect(leases.requests / leases.renewedAt.length).to.be.at.most(share < 0.5 ? 2 : 3)
    })
  }
})
