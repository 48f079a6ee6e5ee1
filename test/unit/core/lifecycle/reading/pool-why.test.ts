/** `pool why` from the pool, its Lease and the verdict records: each answer, and which record is current. */
import {expect} from 'chai'
import {dryRunNote, explainPool, WHY_EXIT_CODES, type VerdictSighting} from '../../../../../src/core/lifecycle/reading/pool-why.ts'
import type {VerdictRecord} from '../../../../../src/core/lifecycle/verdict.ts'
import {POOL_KINDS} from '../../../../../src/core/pool-kinds.ts'
import type {ConditionStatus, Lease, Pool} from '../../../../../src/core/types.ts'

const kind = POOL_KINDS.machine
const NOW = Date.parse('2026-01-01T01:00:00Z')
const pool = (status?: ConditionStatus, reason = 'HeartbeatReceived'): Pool => ({
  apiVersion: 'compute.ironcore.dev/v1alpha1',
  kind: 'MachinePool',
  metadata: {name: 'p', uid: 'u1'},
  status: {conditions: status === undefined ? [] : [{type: 'Ready', status, reason, message: 'm', lastTransitionTime: '2026-01-01T00:59:00Z'}]},
})
const lease = (renewTime: string, seconds = 40): Lease => ({name: 'p', namespace: kind.leaseNamespace, spec: {renewTime, leaseDurationSeconds: seconds}})
const record = (over: Partial<VerdictRecord> = {}): VerdictRecord => ({
  version: 1,
  kind: 'machine',
  pool: 'p',
  uid: 'u1',
  controller: 'host_1',
  dryRun: false,
  state: 'marked',
  stateSince: '2026-01-01T00:59:00.000Z',
  lastProgress: {renewTime: 'r1', readyStatus: 'True', observedAt: '2026-01-01T00:58:00.000Z'},
  gracePeriodMs: 50_000,
  silenceMs: 50_000,
  blindExcludedMs: 12_400,
  blindReasons: ['api-unanswered'],
  retries: 0,
  limiter: {queued: 0, inFlight: 1},
  at: '2026-01-01T00:59:00.000Z',
  ...over,
})
const sighting = (reason: string, r?: VerdictRecord, at = Date.parse(r?.at ?? '2026-01-01T00:59:00Z')): VerdictSighting => ({reason, at, ...(r === undefined ? {} : {record: r})})

describe('pool why', () => {
  it('a marked pool: by whom, the silence, the blind time and its reason, from the mark\'s record; exit 0', () => {
    const why = explainPool({kind, pool: pool('Unknown', kind.unknownReason), lease: lease('r1'), sightings: [sighting(kind.unknownReason, record())], nowWall: NOW})
    expect(why).to.deep.include({verdict: 'marked', record: record()})
    expect(why.summary).to.equal('marked Ready=Unknown by host_1 at 2026-01-01T00:59:00.000Z: silent for 50s against a grace period of 50s; 12.4s blind not counted (api-unanswered); confirmed by a fresh read of its Lease')
    expect(WHY_EXIT_CODES[why.verdict]).to.equal(0)
  })

  it("a pool marked by a controller that keeps no record (IronCore's): marked, no record", () => {
    const why = explainPool({kind, pool: pool('Unknown', kind.unknownReason), lease: lease('r1'), sightings: [sighting(kind.unknownReason)], nowWall: NOW})
    expect(why.verdict).to.equal('marked')
    expect(why.record).to.equal(undefined)
  })

  it('a silent pool whose write keeps failing: not marked, held by retrying since the record says, with the error; exit 3', () => {
    const held = record({state: 'retrying', stateSince: '2026-01-01T00:59:05.000Z', retries: 2, lastError: 'writing Ready=Unknown failed: HTTP 500'})
    const why = explainPool({kind, pool: pool('True'), lease: lease('r1', 1), sightings: [sighting('MachinePoolUnknownWriteRetrying', held)], nowWall: NOW})
    expect(why).to.deep.include({verdict: 'not-marked', heldBy: {what: 'retrying', since: '2026-01-01T00:59:05.000Z'}, record: held})
    expect(why.summary).to.include('writing Ready=Unknown failed: HTTP 500')
    expect(WHY_EXIT_CODES[why.verdict]).to.equal(3)
  })

  it('a record of an earlier silence (the Lease renewed since) is history: not used', () => {
    const held = record({state: 'retrying'})
    const why = explainPool({kind, pool: pool('True'), lease: lease('r2', 1), sightings: [sighting('MachinePoolUnknownWriteRetrying', held)], nowWall: NOW})
    expect(why.verdict).to.equal('unknown')
    expect(why.record).to.equal(undefined)
  })

  it('held by the breaker when its last Event tripped it; a dry run\'s would-mark is shown beside', () => {
    const would = record({dryRun: true, controller: 'dry_1'})
    const why = explainPool({kind, pool: pool('True'), lease: lease('r1', 1), sightings: [sighting('WouldMarkUnknown', would)], breaker: {tripped: true, at: NOW - 5_000, message: '3 of 3 machinepools stale at once'}, nowWall: NOW})
    expect(why).to.deep.include({verdict: 'not-marked', heldBy: {what: 'held (breaker)', since: '2026-01-01T00:59:55.000Z'}, dryRun: would})
  })

  it('alive: a valid Lease; no record and an expired Lease: unknown, exit 4', () => {
    expect(explainPool({kind, pool: pool('True'), lease: lease('2026-01-01T00:59:50.000000Z'), sightings: [], nowWall: NOW}).verdict).to.equal('not-marked')
    const why = explainPool({kind, pool: pool('True'), lease: lease('2026-01-01T00:50:00.000000Z'), sightings: [], nowWall: NOW})
    expect(why.verdict).to.equal('unknown')
    expect(WHY_EXIT_CODES[why.verdict]).to.equal(4)
  })

  it("pool status's note: what a dry run would do for the current silence, or that it agrees with the mark; nothing for an earlier silence", () => {
    const would = [sighting('WouldMarkUnknown', record({dryRun: true, controller: 'dry_1'}))]
    expect(dryRunNote(kind, pool('True'), lease('r1'), would)).to.equal('dry run (dry_1) would mark it Unknown at 2026-01-01T00:59:00.000Z, silent for 50s against a grace period of 50s; 12.4s blind not counted (api-unanswered)')
    expect(dryRunNote(kind, pool('Unknown', kind.unknownReason), lease('r1'), would)).to.match(/^dry run \(dry_1\) agrees: it would have marked it at/)
    expect(dryRunNote(kind, pool('True'), lease('r2'), would)).to.equal(undefined)
  })
})
