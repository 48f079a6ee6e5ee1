/**
 * The simulator's judge of promise S (no live pool marked): when a mark of a live pool is the truth
 * because its poollet could not have renewed, and when it is a false Unknown. Each case is a history
 * of one poollet's requests told to the Oracle as sim-api tells them, then a mark.
 */
import {expect} from 'chai'
import {impairedIntervals, impairedUntil, Oracle} from '../../../sim/oracle.ts'
import type {Fault} from '../../../sim/faults.ts'
import type {Scenario} from '../../../sim/schedule.ts'
import {READY_CONDITION} from '../../../src/core/pool-kinds.ts'

const S = 1_000
const G = 50 * S
const POOLLET = {role: 'poollet', index: 0} as const
const CONTROLLER = {role: 'controller', index: 0} as const

type Request = {at: number; op?: 'get' | 'update'; outcome?: 'ok' | 'reset' | 'lost' | 'unanswered'; conflict?: boolean}

/** One poollet's history (its last renewal, then its requests), then a mark at markAt: false Unknowns. */
function judge(faults: Fault[], renewedAt: number, requests: Request[], markAt: number): number {
  const scenario: Scenario = {seed: 0, pools: 1, replicas: 1, durationMs: 900 * S, classes: [...new Set(faults.map((f) => f.class))], faults, deaths: [], recreations: []}
  const oracle = new Oracle(scenario, G, (name) => (name === 'pool-0' ? 0 : undefined), (i) => `pool-${i}`)
  const lease = {name: 'pool-0', namespace: 'ironcore-machinepool-leases', resourceVersion: '1', spec: {}}
  oracle.committed({resource: 'leases', type: 'upsert', object: lease, rv: 1}, POOLLET, renewedAt)
  for (const r of requests) {
    const op = `${r.op ?? 'update'} lease ironcore-machinepool-leases/pool-0`
    oracle.requestSent(POOLLET, op, r.at, r.outcome ?? 'ok')
    if (r.conflict === true) oracle.requestConflicted(POOLLET, op, r.at)
  }
  const pool = (status: 'True' | 'Unknown') => ({apiVersion: 'compute.ironcore.dev/v1alpha1', kind: 'MachinePool', metadata: {name: 'pool-0'}, status: {conditions: [{type: READY_CONDITION, status, reason: status === 'True' ? 'HeartbeatReceived' : 'NodeStatusUnknown', message: ''}]}})
  oracle.committed({resource: 'pools', type: 'upsert', object: pool('True'), rv: 2}, CONTROLLER, 0)
  oracle.committed({resource: 'pools', type: 'upsert', object: pool('Unknown'), rv: 3}, CONTROLLER, markAt)
  return oracle.falseUnknowns.length
}

/** Writes every `every` ms in [from, to), each spoilt on the poollet's own link. */
function lostEvery(from: number, to: number, every: number): Request[] {
  const out: Request[] = []
  for (let at = from; at < to; at += every) out.push({at, outcome: 'lost'})
  return out
}

const stall = (start: number, end: number): Fault => ({class: 'stall', start, end})

describe('the oracle of promise S: a live pool marked, excused only if its poollet could not have renewed', () => {
  it('every write lost on its own link: the mark is the truth', () => {
    expect(judge([], 50 * S, lostEvery(55 * S, 110 * S, 10 * S), 110 * S)).to.equal(0)
  })

  it('one write that got through in clear time and met no conflict: a false Unknown (it could have renewed)', () => {
    const requests = lostEvery(55 * S, 110 * S, 10 * S)
    requests[2] = {at: requests[2]!.at, outcome: 'ok'}
    expect(judge([], 50 * S, requests, 110 * S)).to.equal(1)
  })

  it('cut off in clear time, one write hung in a stall: the stalled write counts for neither side, the mark is the truth (seed 67557)', () => {
    // The stall is cut out of the silence, so the clear grace period reaches back before it.
    const requests = [...lostEvery(55 * S, 98 * S, 10 * S), {at: 98.7 * S}, ...lostEvery(116 * S, 126 * S, 10 * S)]
    expect(judge([stall(100 * S, 115.6 * S)], 50 * S, requests, 126 * S)).to.equal(0)
  })

  it('a renewal that committed within the last grace period: a false Unknown, however the other requests fared', () => {
    expect(judge([stall(100 * S, 115.6 * S)], 80 * S, lostEvery(85 * S, 126 * S, 5 * S), 126 * S)).to.equal(1)
  })

  it('a renewal a grace period ago, before a stall, and every request since lost on its own link: the mark is the truth', () => {
    // The renewal's own write (sent just before it committed) got through: it is before the window.
    expect(judge([stall(100 * S, 102 * S)], 70 * S, [{at: 70 * S - 5}, ...lostEvery(75 * S, 121 * S, 10 * S)], 121 * S)).to.equal(0)
  })

  it('a write that got through before a stall, within the last grace period of clear time though more than G ago: a false Unknown', () => {
    const requests = [...lostEvery(45 * S, 70 * S, 10 * S), {at: 70 * S}, ...lostEvery(72 * S, 100 * S, 10 * S), {at: 101 * S}, ...lostEvery(131 * S, 145 * S, 10 * S)]
    expect(judge([stall(100 * S, 130 * S)], 40 * S, requests, 145 * S)).to.equal(1)
  })

  it('every try landing in a stall and none spoilt (ticks phase-locked onto stalls): a false Unknown', () => {
    const faults: Fault[] = []
    const requests: Request[] = []
    for (let t = 60 * S; t < 200 * S; t += 20 * S) {
      faults.push(stall(t, t + 14 * S))
      requests.push({at: t + 1 * S})
    }
    expect(judge(faults, 50 * S, requests, 200 * S)).to.equal(1)
  })

  it('one try lost in clear time, one hung in a stall, then two heartbeat slots and more of clear time untried: a false Unknown', () => {
    const requests: Request[] = [{at: 60 * S, outcome: 'lost'}, {at: 63 * S}]
    expect(judge([stall(62 * S, 72 * S)], 45 * S, requests, 110 * S)).to.equal(1)
  })

  it('a read that got through renews nothing: with every write lost the mark is the truth', () => {
    const requests = lostEvery(55 * S, 110 * S, 10 * S).flatMap((r): Request[] => [{at: r.at - 4, op: 'get'}, r])
    expect(judge([], 50 * S, requests, 110 * S)).to.equal(0)
  })

  it('a write that got through and met a conflict (its own earlier write landed unanswered) renews nothing: the mark is the truth', () => {
    const requests = lostEvery(55 * S, 110 * S, 10 * S)
    requests[1] = {at: requests[1]!.at, conflict: true}
    expect(judge([], 50 * S, requests, 110 * S)).to.equal(0)
  })

  it('a poollet that tried nothing in its window: a false Unknown', () => {
    expect(judge([], 50 * S, [], 110 * S)).to.equal(1)
  })
})

describe("the oracle's bound: a fault that loses events inside another's blind spell", () => {
  const refuse: Fault = {class: 'refuse-writes', start: 415 * S, end: 521.57 * S}
  const silence = (start: number, end: number): Fault => ({class: 'watch-silence', start, end, replica: 0, resource: 'leases'})

  it('a watch silence relisted inside refused writes restarts every grace period at the end of their spell (seed 8)', () => {
    const spellEnd = impairedUntil(refuse, G)
    const intervals = impairedIntervals([refuse, silence(422.5 * S, 468.1 * S)], G)
    expect(intervals).to.deep.equal([[415 * S, spellEnd + G]])
  })

  it('a restart whose fresh grace period refused writes cut 9 s in (within a write-probe interval, blind from its last landed probe) restarts every grace period at the end of their spell (seed 150128)', () => {
    const restart: Fault = {class: 'controller-restart', start: 329.173 * S, end: 353.517 * S, replica: 0}
    const refused: Fault = {class: 'refuse-writes', start: 362.635 * S, end: 528.004 * S}
    expect(impairedIntervals([restart, refused], G)).to.deep.equal([[restart.start, impairedUntil(refused, G) + G]])
  })

  it('a restart a write-probe interval and more before refused writes costs only its own interval', () => {
    const restart: Fault = {class: 'controller-restart', start: 329 * S, end: 350 * S, replica: 0}
    const refused: Fault = {class: 'refuse-writes', start: 360.001 * S, end: 528 * S}
    expect(impairedIntervals([restart, refused], G)).to.deep.equal([[restart.start, impairedUntil(refused, G)]])
  })

  it('a watch silence relisted in clear time costs only its own interval', () => {
    const quiet = silence(600 * S, 640 * S)
    expect(impairedIntervals([refuse, quiet], G)).to.deep.equal([
      [415 * S, impairedUntil(refuse, G)],
      [600 * S, impairedUntil(quiet, G)],
    ])
  })
})

describe('the oracle of promise S: a mark is judged as of the confirming read it was decided on', () => {
  /** A poollet renewed at `renewals` and was cut off in between; a controller confirms at confirmAt, sends its write at sendAt, and the mark lands at landAt. */
  function raced(renewals: number[], confirmAt: number, sendAt: number, landAt: number): number {
    const scenario: Scenario = {seed: 0, pools: 1, replicas: 1, durationMs: 900 * S, classes: [], faults: [], deaths: [], recreations: []}
    const oracle = new Oracle(scenario, G, (name) => (name === 'pool-0' ? 0 : undefined), (i) => `pool-${i}`)
    const pool = (status: 'True' | 'Unknown') => ({apiVersion: 'compute.ironcore.dev/v1alpha1', kind: 'MachinePool', metadata: {name: 'pool-0'}, status: {conditions: [{type: READY_CONDITION, status, reason: 'r', message: ''}]}})
    oracle.committed({resource: 'pools', type: 'upsert', object: pool('True'), rv: 1}, CONTROLLER, 0)
    const events: [number, () => void][] = [
      ...renewals.map((at): [number, () => void] => [at, () => {
        oracle.requestSent(POOLLET, 'update lease ironcore-machinepool-leases/pool-0', at - 1, 'ok')
        oracle.committed({resource: 'leases', type: 'upsert', object: {name: 'pool-0', namespace: 'ironcore-machinepool-leases', resourceVersion: '2', spec: {}}, rv: 2}, POOLLET, at)
      }]),
      // Cut off in between: every try at its cadence lost on its own link.
      ...[20, 30, 40, 50].map((at): [number, () => void] => [at * S, () => oracle.requestSent(POOLLET, 'update lease ironcore-machinepool-leases/pool-0', at * S, 'lost')]),
      [confirmAt, () => oracle.requestSent(CONTROLLER, 'get lease ironcore-machinepool-leases/pool-0', confirmAt, 'ok')],
      [sendAt, () => oracle.requestSent(CONTROLLER, 'update pool pool-0 status', sendAt, 'ok')],
      [landAt, () => oracle.committed({resource: 'pools', type: 'upsert', object: pool('Unknown'), rv: 3}, CONTROLLER, landAt)],
    ]
    for (const [, fn] of events.sort((a, b) => a[0] - b[0])) fn()
    return oracle.falseUnknowns.length
  }

  it('a renewal that commits after the confirming read, while the mark is on its way, is a race of two writers, not a false Unknown (seed 3322 of the loss class)', () => {
    expect(raced([10 * S, 60.004 * S], 60.001 * S, 60.002 * S, 60.006 * S)).to.equal(0)
  })

  it('a renewal that committed before the confirming read, within the grace period: a false Unknown', () => {
    expect(raced([10 * S, 55 * S], 60.001 * S, 60.002 * S, 60.006 * S)).to.equal(1)
  })

  it('without a confirming read shortly before it, the mark is judged as of its write: a renewal before the write counts', () => {
    expect(raced([10 * S, 60.0015 * S], 1 * S, 60.002 * S, 60.006 * S)).to.equal(1)
    expect(raced([10 * S, 60.0015 * S], 60.0004 * S, 60.002 * S, 60.006 * S), 'the same renewal, sent after a confirming read').to.equal(0)
  })
})
