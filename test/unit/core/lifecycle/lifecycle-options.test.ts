/** The engine's defaults, derived from the grace period as their doc comments say. */
import {expect} from 'chai'
import {
  breakerHoldMs,
  breakerWindowMs,
  DEFAULT_CONFIRM_TIMEOUT_MS,
  DEFAULT_CONTROLLER_IDENTITY,
  DEFAULT_GRACE_PERIOD_MS,
  lifecycleDefaults,
  retryDelay,
  retryTimings,
  unmarkableRetryMs,
} from '../../../../src/core/lifecycle/lifecycle-options.ts'
import {POOL_KINDS} from '../../../../src/core/pool-kinds.ts'
import {FULL_WRITE_PLAN} from '../../../../src/core/types.ts'
import {FakeClock} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'

describe('lifecycle options', () => {
  it('retries after 1 s doubling to 10 s at the 50 s grace; a shorter grace scales both down (grace/50, grace/5), a longer one keeps them', () => {
    expect(retryTimings(50_000)).to.deep.equal({retryBaseMs: 1_000, retryMaxMs: 10_000})
    expect(retryTimings(5_000)).to.deep.equal({retryBaseMs: 100, retryMaxMs: 1_000})
    expect(retryTimings(600_000)).to.deep.equal({retryBaseMs: 1_000, retryMaxMs: 10_000})
  })

  it('the delay before retry n doubles from the base and stops at the cap', () => {
    const timings = {retryBaseMs: 1_000, retryMaxMs: 10_000}
    expect([1, 2, 3, 4, 5, 100].map((n) => retryDelay(timings, n))).to.deep.equal([1_000, 2_000, 4_000, 8_000, 10_000, 10_000])
  })

  it("the breaker's hold is a fifth of the grace and its window four fifths (10 s and 40 s at 50 s); an unmarkable pool waits ten grace periods", () => {
    expect([breakerHoldMs(50_000), breakerWindowMs(50_000), unmarkableRetryMs(50_000)]).to.deep.equal([10_000, 40_000, 500_000])
    expect([breakerHoldMs(8_000), breakerWindowMs(8_000)]).to.deep.equal([1_600, 6_400])
  })

  it('fills every default from the grace period, and keeps what was given', () => {
    const clock = new FakeClock()
    const base = {kind: POOL_KINDS.machine, clock, store: {} as never, getPool: () => undefined, confirmLease: () => Promise.resolve(undefined), events: {record() {}}, logger: new FakeLogger()}
    const d = lifecycleDefaults(base)
    expect(d).to.deep.include({
      confirmTimeoutMs: DEFAULT_CONFIRM_TIMEOUT_MS,
      gracePeriodMs: DEFAULT_GRACE_PERIOD_MS,
      breakerWindowMs: 40_000,
      breakerHoldMs: 10_000,
      retryBaseMs: 1_000,
      retryMaxMs: 10_000,
      unmarkableRetryMs: 500_000,
      plan: FULL_WRITE_PLAN,
      dryRun: false,
      identity: DEFAULT_CONTROLLER_IDENTITY,
    })
    expect(d.getLease('p')).to.equal(undefined)
    expect(d.canJudge()).to.equal(true)
    expect(d.observer).to.deep.equal({})
    const short = lifecycleDefaults({...base, gracePeriodMs: 8_000})
    expect(short).to.deep.include({breakerWindowMs: 6_400, breakerHoldMs: 1_600, retryBaseMs: 160, retryMaxMs: 1_600, unmarkableRetryMs: 80_000})
    const given = lifecycleDefaults({...base, gracePeriodMs: 8_000, breakerWindowMs: 1, breakerHoldMs: 2, retryBaseMs: 3, retryMaxMs: 4, unmarkableRetryMs: 5, confirmTimeoutMs: 6, dryRun: true, identity: 'me'})
    expect(given).to.deep.include({breakerWindowMs: 1, breakerHoldMs: 2, retryBaseMs: 3, retryMaxMs: 4, unmarkableRetryMs: 5, confirmTimeoutMs: 6, dryRun: true, identity: 'me'})
  })
})
