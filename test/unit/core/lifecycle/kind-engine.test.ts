/** One kind's engine as the controller wires it: the sight asked before each decision, the caches' states as the view's sources. */
import {expect} from 'chai'
import {kindEngine} from '../../../../src/core/lifecycle/kind-engine.ts'
import {Sight, sightTimings} from '../../../../src/core/lifecycle/sight/sight.ts'
import type {BlindSpell} from '../../../../src/core/lifecycle/sight/view-state.ts'
import {POOL_KINDS, READY_CONDITION} from '../../../../src/core/pool-kinds.ts'
import type {Lease, Pool, PoolCondition} from '../../../../src/core/types.ts'
import {FakeClock} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'
import {FakePoolStatusStore} from '../../../support/fake-stores.ts'
import {RecordingEvents} from '../../../support/lifecycle-fixture.ts'

const KIND = POOL_KINDS.machine
const GRACE_MS = 50_000

function wired() {
  const clock = new FakeClock()
  const logger = new FakeLogger()
  const store = new FakePoolStatusStore()
  const leases = new Map<string, Lease>()
  const sight = new Sight({clock, logger, probe: () => Promise.resolve(), ...sightTimings(GRACE_MS)})
  const spells: BlindSpell[] = []
  const blindFor: string[] = []
  const engine = kindEngine({
    kind: KIND,
    clock,
    sight,
    caches: ['pools', 'leases'],
    store,
    getPool: (name) => store.peek(name),
    getLease: (name) => leases.get(name),
    confirmLease: (name) => Promise.resolve(leases.get(name)),
    events: new RecordingEvents(),
    logger,
    gracePeriodMs: GRACE_MS,
    viewObserver: {spellEnded: (spell) => spells.push(spell), blindFor: (reason) => blindFor.push(reason)},
  })
  const stop = new AbortController()
  void sight.run(stop.signal)
  const ready: PoolCondition = {type: READY_CONDITION, status: 'True', reason: 'HeartbeatReceived', message: KIND.readyMessage, observedGeneration: 1}
  const pool: Pool = {apiVersion: `${KIND.group}/${KIND.version}`, kind: KIND.kind, metadata: {name: 'p', uid: 'uid-p', generation: 1}, status: {conditions: [ready]}}
  store.put(pool)
  const renew = (renewTime: string) => {
    const lease: Lease = {name: 'p', namespace: KIND.leaseNamespace, spec: {holderIdentity: 'p_x', renewTime}}
    leases.set('p', lease)
    engine.lifecycle.leaseUpserted(lease)
  }
  const status = () => store.peek('p')?.status?.conditions?.find((c) => c.type === READY_CONDITION)?.status
  return {clock, engine, stop, spells, blindFor, renew, status, pool: () => store.peek('p')!}
}

describe('kind engine (production wiring)', () => {
  it('a deadline that fires the instant a paused process resumes, before the tick, is not judged: the sight is asked first', async () => {
    const {clock, engine, stop, renew, status, pool} = wired()
    await clock.advance(0)
    engine.cacheState('pools', undefined)
    engine.cacheState('leases', undefined)
    engine.lifecycle.setLeader(true)
    renew('start')
    engine.lifecycle.poolUpserted(pool())
    await clock.advance(20_500)
    renew('r1')
    // The last tick before the pause is at 70 s; the deadline (70.5 s) comes due before the next one.
    await clock.advance(49_700)
    await clock.jump(30_000)
    expect(status(), 'not marked on the instant of the resume').to.equal('True')
    stop.abort()
  })

  it("a cache's spell keeps the silence seen before it unless the cache had to list again; the view's time blind is heard per reason", async () => {
    const {clock, engine, stop, spells, blindFor} = wired()
    await clock.advance(0)
    engine.cacheState('pools', undefined)
    engine.cacheState('leases', undefined)
    expect(blindFor.length, 'the start-up spell, heard as it ended').to.be.greaterThan(0)
    await clock.advance(1_000)
    engine.cacheState('leases', 'watch-gap', 'watch closed')
    await clock.advance(1_000)
    engine.cacheState('leases', undefined)
    engine.cacheState('leases', 'watch-gap', 'watch closed')
    await clock.advance(1_000)
    engine.cacheState('leases', undefined, undefined, true)
    expect(spells.slice(-2).map((s) => [s.reason, s.lost])).to.deep.equal([['watch-gap', false], ['watch-gap', true]])
    stop.abort()
  })
})
