/** `pool why` from the pool, its Lease and the verdict records: each answer, and which record is current. */
import {expect} from 'chai'
import {dryRunNote, explainPool, WHY_EXIT_CODES, type VerdictSighting} from '../../../../../src/core/lifecycle/reading/pool-why.ts'
import type {VerdictRecord} from '../../../../../src/core/lifecycle/verdict.ts'
import {POOL_KINDS} from '../../../../../src/core/pool-kinds.ts'
import type {ConditionStatus, Lease, Pool, PoolCondition} from '../../../../../src/core/types.ts'

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

  it('the whole answer names the kind, the pool, its UID and its Ready (reason, transition time); a pool without a UID has none', () => {
    const why = explainPool({kind, pool: pool('True'), lease: lease('2026-01-01T00:59:50.000000Z'), sightings: [], nowWall: NOW})
    expect(why).to.deep.equal({
      kind: 'machine',
      pool: 'p',
      uid: 'u1',
      ready: {status: 'True', reason: 'HeartbeatReceived', lastTransitionTime: '2026-01-01T00:59:00Z'},
      verdict: 'not-marked',
      summary: 'not marked: alive, its Lease was renewed at 2026-01-01T00:59:50.000000Z and is valid until 2026-01-01T01:00:30.000Z (by the local clock)',
    })
    const bare: Pool = {apiVersion: 'compute.ironcore.dev/v1alpha1', kind: 'MachinePool', metadata: {name: 'p'}}
    const none = explainPool({kind, pool: bare, sightings: [], nowWall: NOW})
    expect(none).to.deep.equal({
      kind: 'machine',
      pool: 'p',
      ready: {status: 'None'},
      verdict: 'unknown',
      summary: "not marked, and no verdict record says why: alive, or not past the controller's grace period yet, or the controller is blind or not running (see ironpool_controller_pools_overdue and its /readyz)",
    })
  })

  it('a Lease valid until exactly now is no longer taken for alive', () => {
    const why = explainPool({kind, pool: pool('True'), lease: lease('2026-01-01T00:59:20.000000Z'), sightings: [], nowWall: NOW})
    expect(why.verdict).to.equal('unknown')
  })

  it('a mark after failed attempts says how many; without blind time the silence clause names none', () => {
    const r = record({retries: 2, blindExcludedMs: 0, blindReasons: []})
    const why = explainPool({kind, pool: pool('Unknown', kind.unknownReason), lease: lease('r1'), sightings: [sighting(kind.unknownReason, r)], nowWall: NOW})
    expect(why.summary).to.equal('marked Ready=Unknown by host_1 at 2026-01-01T00:59:00.000Z: silent for 50s against a grace period of 50s; confirmed by a fresh read of its Lease after 2 failed attempts')
  })

  it("the newest mark's record is the answer, in whatever order the Events come; a dry run's, or one of another state or reason, is no mark", () => {
    const older = record({controller: 'old', at: '2026-01-01T00:58:00.000Z'})
    const newer = record({controller: 'new', at: '2026-01-01T00:59:30.000Z'})
    const marked = pool('Unknown', kind.unknownReason)
    expect(explainPool({kind, pool: marked, lease: lease('r1'), sightings: [sighting(kind.unknownReason, older), sighting(kind.unknownReason, newer)], nowWall: NOW}).record).to.deep.equal(newer)
    expect(explainPool({kind, pool: marked, lease: lease('r1'), sightings: [sighting(kind.unknownReason, newer), sighting(kind.unknownReason, older)], nowWall: NOW}).record).to.deep.equal(newer)
    const notMarks = [
      sighting(kind.unknownReason, record({dryRun: true})),
      sighting(kind.unknownReason, record({state: 'retrying'})),
      sighting('MachinePoolUnknownWriteRetrying', record()),
    ]
    for (const s of notMarks) {
      const why = explainPool({kind, pool: marked, lease: lease('r1'), sightings: [s], nowWall: NOW})
      expect(why.record, JSON.stringify(s)).to.equal(undefined)
      expect(why.summary).to.equal("Ready=Unknown (MachinePoolStatusUnknown), with no verdict record: marked by a controller that keeps none (IronCore's lifecycle controller), or its Event has expired")
    }
    const noReason: Pool = {...marked, status: {conditions: [{type: 'Ready', status: 'Unknown'} as PoolCondition]}}
    expect(explainPool({kind, pool: noReason, sightings: [], nowWall: NOW}).summary).to.match(/^Ready=Unknown \(no reason\), with no verdict record/)
  })

  it('a record of the pool before it was made anew (another UID) is not current; a record or a pool without a UID goes by the renewal alone', () => {
    const held = record({state: 'retrying', uid: 'u0'})
    expect(explainPool({kind, pool: pool('True'), lease: lease('r1', 1), sightings: [sighting('MachinePoolUnknownWriteRetrying', held)], nowWall: NOW}).record).to.equal(undefined)
    const noUid = record({state: 'retrying', uid: undefined})
    expect(explainPool({kind, pool: pool('True'), lease: lease('r1', 1), sightings: [sighting('MachinePoolUnknownWriteRetrying', noUid)], nowWall: NOW}).record).to.deep.equal(noUid)
    const bare: Pool = {...pool('True'), metadata: {name: 'p'}}
    expect(explainPool({kind, pool: bare, lease: lease('r1', 1), sightings: [sighting('MachinePoolUnknownWriteRetrying', held)], nowWall: NOW}).record).to.deep.equal(held)
  })

  it('a held pool: what holds it (the hold named, or unknown), since when, the silence; the newest such record; a would-mark or a mark is no hold', () => {
    const held = record({state: 'held', hold: 'blind', stateSince: '2026-01-01T00:59:10.000Z', at: '2026-01-01T00:59:10.000Z'})
    const older = record({state: 'retrying', at: '2026-01-01T00:58:10.000Z'})
    const why = explainPool({kind, pool: pool('True'), lease: lease('r1', 1), sightings: [sighting('MachinePoolUnknownWriteRetrying', older), sighting('MachinePoolStaleHeld', held)], nowWall: NOW})
    expect(why.heldBy).to.deep.equal({what: 'held (blind)', since: '2026-01-01T00:59:10.000Z'})
    expect(why.summary).to.equal('not marked: held (blind) since 2026-01-01T00:59:10.000Z; silent for 50s against a grace period of 50s; 12.4s blind not counted (api-unanswered)')
    const noHold = explainPool({kind, pool: pool('True'), lease: lease('r1', 1), sightings: [sighting('MachinePoolStaleHeld', record({state: 'held'}))], nowWall: NOW})
    expect(noHold.heldBy?.what).to.equal('held (unknown)')
    const notHolds = [sighting('WouldMarkUnknown', record({state: 'retrying', dryRun: true})), sighting('MachinePoolStaleHeld', record({state: 'marked'}))]
    for (const s of notHolds) expect(explainPool({kind, pool: pool('True'), lease: lease('r1', 1), sightings: [s], nowWall: NOW}).heldBy, s.reason).to.equal(undefined)
  })

  it("the breaker's answer names it and its message; Ready=False is the poollet's own report; a dry run alone says it would have marked; each with the dry run's note", () => {
    const would = sighting('WouldMarkUnknown', record({dryRun: true, controller: 'dry_1'}))
    const note = '; a dry run (dry_1) would have marked it at 2026-01-01T00:59:00.000Z'
    const breaker = explainPool({kind, pool: pool('True'), lease: lease('r1', 1), sightings: [would], breaker: {tripped: true, at: NOW, message: '3 of 3 stale'}, nowWall: NOW})
    expect(breaker.summary).to.equal(`not marked: the breaker holds every machinepool (3 of 3 stale)${note}`)
    const recovered = explainPool({kind, pool: pool('True'), lease: lease('r1', 1), sightings: [], breaker: {tripped: false, at: NOW, message: 'within'}, nowWall: NOW})
    expect(recovered.heldBy).to.equal(undefined)
    const notReady = explainPool({kind, pool: pool('False', 'RuntimeUnreachable'), lease: lease('r1', 1), sightings: [would], nowWall: NOW})
    expect(notReady).to.deep.include({verdict: 'not-marked', dryRun: would.record})
    expect(notReady.summary).to.equal(`not marked: Ready=False (RuntimeUnreachable) is its poollet's own report: it is alive and says its runtime is not${note}`)
    const noReason: Pool = {...pool('True'), status: {conditions: [{type: 'Ready', status: 'False'} as PoolCondition]}}
    expect(explainPool({kind, pool: noReason, sightings: [], nowWall: NOW}).summary).to.match(/^not marked: Ready=False \(no reason\)/)
    const dryOnly = explainPool({kind, pool: pool('True'), lease: lease('r1', 1), sightings: [would], nowWall: NOW})
    expect(dryOnly).to.deep.include({verdict: 'not-marked', dryRun: would.record})
    expect(dryOnly.summary).to.equal('not marked (no controller in charge marked it); a dry run (dry_1) would have at 2026-01-01T00:59:00.000Z: silent for 50s against a grace period of 50s; 12.4s blind not counted (api-unanswered)')
    const held = explainPool({kind, pool: pool('True'), lease: lease('r1', 1), sightings: [sighting('MachinePoolUnknownWriteRetrying', record({state: 'retrying'}))], nowWall: NOW})
    expect(held.dryRun, 'a held record is no dry run').to.equal(undefined)
  })

  it("pool status's note comes only from a would-mark's Event", () => {
    expect(dryRunNote(kind, pool('True'), lease('r1'), [sighting('MachinePoolUnknownWriteRetrying', record({state: 'retrying'}))])).to.equal(undefined)
    expect(dryRunNote(kind, pool('True'), lease('r1'), [sighting('WouldMarkUnknown')])).to.equal(undefined)
  })
})
