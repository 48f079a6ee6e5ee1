/** What the controller says of its verdicts: the Events an operator reads on a pool or the kind's CRD, and the log lines beside them. */
import {expect} from 'chai'
import {
  breakerEvent,
  logBreaker,
  logMark,
  logUnmarkable,
  logWouldMark,
  logZoneBreaker,
  markReport,
  unmarkableEvent,
  viewRestoredEvent,
  wouldMarkEvent,
  writeRetryingEvent,
  zoneBreakerEvent,
} from '../../../../src/core/lifecycle/lifecycle-reports.ts'
import {POOL_KINDS} from '../../../../src/core/pool-kinds.ts'
import type {Pool} from '../../../../src/core/types.ts'
import type {VerdictRecord} from '../../../../src/core/lifecycle/verdict.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'

const kind = POOL_KINDS.machine
const pool: Pool = {apiVersion: 'compute.ironcore.dev/v1alpha1', kind: 'MachinePool', metadata: {name: 'p', uid: 'u1', generation: 3}}
const CRD = {apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'machinepools.compute.ironcore.dev'}
const record = {silenceMs: 52_000, blindExcludedMs: 1_500, blindReasons: ['api-unanswered']} as unknown as VerdictRecord

describe('lifecycle reports', () => {
  it("the breaker's Events on the kind's CRD: a Warning when it trips (naming the group most of them share), a Normal when it recovers", () => {
    const tripped = breakerEvent(kind, {transition: 'tripped', unhealthy: 7, total: 10, limit: {kind: 'percent', percent: 50}}, {phrase: 'in zone a', silent: 6})
    expect(tripped).to.deep.equal({
      ...CRD,
      type: 'Warning',
      reason: 'MaxUnhealthyExceeded',
      message: '7 of 10 machinepools stale at once, more than --max-unhealthy=50%: marking none Unknown (6 of them in zone a)',
    })
    expect(breakerEvent(kind, {transition: 'tripped', unhealthy: 3, total: 4, limit: {kind: 'count', count: 2}}).message).to.equal(
      '3 of 4 machinepools stale at once, more than --max-unhealthy=2: marking none Unknown',
    )
    expect(breakerEvent(kind, {transition: 'recovered', unhealthy: 1, total: 10, limit: {kind: 'count', count: 2}})).to.deep.equal({
      ...CRD,
      type: 'Normal',
      reason: 'MaxUnhealthyRecovered',
      message: '1 of 10 machinepools stale, within --max-unhealthy=2: marking resumed',
    })
  })

  it("a zone's breaker Events name the zone: Warning when it holds the zone, Normal when it releases it", () => {
    expect(zoneBreakerEvent(kind, {zone: 'a', transition: 'tripped', unhealthy: 4, total: 5}, '50%')).to.deep.equal({
      ...CRD,
      type: 'Warning',
      reason: 'ZoneMaxUnhealthyExceeded',
      message: '4 of 5 machinepools in zone a stale at once, more than --max-unhealthy=50%: marking none there; other zones are judged',
    })
    expect(zoneBreakerEvent(kind, {zone: 'a', transition: 'recovered', unhealthy: 1, total: 5}, '50%')).to.deep.equal({
      ...CRD,
      type: 'Normal',
      reason: 'ZoneMaxUnhealthyRecovered',
      message: '1 of 5 machinepools in zone a stale, within --max-unhealthy=50%: marking resumed there',
    })
  })

  it("the view-restored Event says how long the view was not whole, why (each reason once), and whether grace periods restarted", () => {
    const lost = viewRestoredEvent(kind, {reason: 'paused', reasons: ['paused', 'watch-gap', 'paused'], durationMs: 12_345.6, lost: true})
    expect(lost).to.deep.equal({
      ...CRD,
      type: 'Warning',
      reason: 'ControllerViewRestored',
      message: "the controller's view of machinepools was not whole for 12.346s (paused, watch-gap); every grace period restarted when it was whole again",
    })
    const kept = viewRestoredEvent(kind, {reason: 'api-unanswered', reasons: ['api-unanswered'], durationMs: 4_000, lost: false})
    expect(kept.message).to.equal("the controller's view of machinepools was not whole for 4s (api-unanswered); that time did not count as silence")
  })

  it("a pool's Events: the dry run's would-mark (Normal) and a write that keeps failing name what would be or failed to be written", () => {
    expect(wouldMarkEvent(kind, pool)).to.deep.include({
      name: 'p',
      uid: 'u1',
      type: 'Normal',
      reason: 'WouldMarkUnknown',
      message: 'dry run: would set Ready=Unknown (MachinePoolStatusUnknown): machinepoollet stopped posting machine pool status.',
    })
    expect(writeRetryingEvent(kind, pool, 'HTTP 500')).to.deep.include({
      type: 'Warning',
      reason: 'MachinePoolUnknownWriteRetrying',
      message: 'stale, not marked yet: writing Ready=Unknown failed (HTTP 500); retrying',
    })
    expect(unmarkableEvent(kind, pool, 'not-held')).to.deep.include({
      reason: 'MachinePoolStaleUnmarked',
      message: 'stale, cannot be marked: the API did not keep the Ready condition written to machinepools',
    })
  })

  it("a mark's log line carries the record's silence and blind time, as `pool why` does; a dry run's says it is one", () => {
    const logger = new FakeLogger()
    const report = markReport('p', 10_000, 10_250, 2)
    expect(report).to.deep.equal({name: 'p', deadline: 10_000, writtenAt: 10_250, delayMs: 250, retries: 2})
    logMark(logger, kind, report, record)
    logWouldMark(logger, kind, report, record)
    logMark(logger, kind, report)
    const fields = {kind: 'machine', pool: 'p', delayMs: 250, retries: 2, silenceMs: 52_000, blindExcludedMs: 1_500, blindReasons: ['api-unanswered']}
    expect(logger.entries).to.deep.equal([
      {level: 'info', obj: fields, msg: 'pool marked Ready=Unknown'},
      {level: 'info', obj: {...fields, dryRun: true}, msg: 'dry run: pool would be marked Ready=Unknown'},
      {level: 'info', obj: {kind: 'machine', pool: 'p', delayMs: 250, retries: 2}, msg: 'pool marked Ready=Unknown'},
    ])
  })

  it('the breakers log a warning with the counts when they trip and an info line when they recover; an unmarkable pool is a warning naming why', () => {
    const logger = new FakeLogger()
    logBreaker(logger, kind, {transition: 'tripped', unhealthy: 7, total: 10, limit: {kind: 'count', count: 5}})
    logBreaker(logger, kind, {transition: 'recovered', unhealthy: 2, total: 10, limit: {kind: 'count', count: 5}})
    logZoneBreaker(logger, kind, {zone: 'a', transition: 'tripped', unhealthy: 4, total: 5})
    logZoneBreaker(logger, kind, {zone: 'a', transition: 'recovered', unhealthy: 1, total: 5})
    logUnmarkable(logger, kind, {name: 'p', reason: 'no-conditions'})
    expect(logger.entries).to.deep.equal([
      {level: 'warn', obj: {kind: 'machine', unhealthy: 7, total: 10, maxUnhealthy: '5'}, msg: 'too many pools stale at once; marking none until fewer are'},
      {level: 'info', obj: {kind: 'machine', unhealthy: 2, total: 10, maxUnhealthy: '5'}, msg: 'stale pools back within --max-unhealthy; marking resumes'},
      {level: 'warn', obj: {kind: 'machine', zone: 'a', unhealthy: 4, total: 5}, msg: 'too many pools stale at once in zone a; marking none there until fewer are'},
      {level: 'info', obj: {kind: 'machine', zone: 'a', unhealthy: 1, total: 5}, msg: 'stale pools in zone a back within --max-unhealthy; marking resumes there'},
      {level: 'warn', obj: {kind: 'machine', pool: 'p', reason: 'no-conditions'}, msg: 'pool p stale, cannot be marked: this API has no conditions for machinepools'},
    ])
  })
})
