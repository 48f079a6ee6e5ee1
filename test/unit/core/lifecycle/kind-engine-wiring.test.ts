/** The kind engine's wiring, link by link: the caches are sources of the view, the view logs with the kind, the engine's requests are answers for the sight. */
import {expect} from 'chai'
import {kindEngine} from '../../../../src/core/lifecycle/kind-engine.ts'
import {Sight, sightTimings, type SightState} from '../../../../src/core/lifecycle/sight/sight.ts'
import type {BlindSpell} from '../../../../src/core/lifecycle/sight/view-state.ts'
import {POOL_KINDS, READY_CONDITION} from '../../../../src/core/pool-kinds.ts'
import type {Lease, Pool} from '../../../../src/core/types.ts'
import {FakeClock} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'
import {FakePoolStatusStore} from '../../../support/fake-stores.ts'
import {RecordingEvents} from '../../../support/lifecycle-fixture.ts'

const KIND = POOL_KINDS.machine
const GRACE_MS = 50_000

function wired(confirmLease: (name: string) => Promise<Lease | undefined> = () => Promise.resolve(undefined)) {
  const clock = new FakeClock()
  const logger = new FakeLogger()
  const store = new FakePoolStatusStore()
  const sight = new Sight({clock, logger, probe: () => Promise.resolve(), ...sightTimings(GRACE_MS)})
  const spells: BlindSpell[] = []
  const engine = kindEngine({
    kind: KIND,
    clock,
    sight,
    caches: ['pools', 'leases'],
    store,
    getPool: (name) => store.peek(name),
    getLease: () => undefined,
    confirmLease,
    events: new RecordingEvents(),
    logger,
    gracePeriodMs: GRACE_MS,
    viewObserver: {spellEnded: (spell) => spells.push(spell)},
  })
  const stop = new AbortController()
  void sight.run(stop.signal)
  const putPool = (name: string) => {
    const pool: Pool = {
      apiVersion: `${KIND.group}/${KIND.version}`,
      kind: KIND.kind,
      metadata: {name, uid: `uid-${name}`, generation: 1},
      status: {conditions: [{type: READY_CONDITION, status: 'True', reason: 'HeartbeatReceived', message: 'ok', observedGeneration: 1}]},
    }
    engine.lifecycle.poolUpserted(store.put(pool))
  }
  return {clock, logger, sight, engine, spells, stop, putPool}
}

describe('kind engine: the wiring', () => {
  it('the view is whole only once the sight and each of the kind’s caches have said so', async () => {
    const {clock, engine, stop} = wired()
    await clock.advance(0)
    expect(engine.view.whole, 'the sight alone').to.be.false
    engine.cacheState('pools', undefined)
    expect(engine.view.whole, 'the sight and the pools').to.be.false
    expect(engine.view.reason).to.equal('not-synced')
    engine.cacheState('leases', undefined)
    expect(engine.view.whole).to.be.true
    stop.abort()
  })

  it('the view logs its changes with the kind’s name', async () => {
    const {clock, logger, engine, stop} = wired()
    await clock.advance(0)
    engine.cacheState('pools', undefined)
    engine.cacheState('leases', undefined)
    const whole = logger.entries.filter((e) => e.msg.startsWith('view whole again'))
    expect(whole).to.have.length(1)
    expect(whole[0]!.obj).to.deep.include({kind: 'machine'})
    stop.abort()
  })

  it('the engine’s confirming reads are answers for the sight: five silent pools whose reads fail together blind it', async () => {
    const {clock, sight, engine, stop, putPool} = wired(() => Promise.reject(new Error('connection reset')))
    await clock.advance(0)
    engine.cacheState('pools', undefined)
    engine.cacheState('leases', undefined)
    engine.lifecycle.setLeader(true)
    for (const name of ['a', 'b', 'c', 'd', 'e']) putPool(name)
    const heard: SightState[] = []
    sight.subscribe((s) => heard.push(s))
    await clock.advance(GRACE_MS)
    // Heard the instant the fifth read failed (the probe sent then ends it again).
    expect(heard[0]?.reason).to.equal('api-unanswered')
    expect(heard[0]?.detail).to.match(/^5 of 5 requests failed within 10000 ms, the last: confirming the silence of machinepool [a-e]: connection reset$/)
    stop.abort()
  })

  it('a cache that relisted says so as it turns whole: said while it is still blind, it does not count yet', async () => {
    const {clock, engine, spells, stop} = wired()
    await clock.advance(0)
    engine.cacheState('pools', undefined)
    engine.cacheState('leases', undefined)
    await clock.advance(1_000)
    engine.cacheState('pools', 'watch-gap', 'watch closed')
    // Within the pools' spell, the leases' cache is relisting, not whole yet.
    engine.cacheState('leases', 'watch-gap', 'watch closed', true)
    await clock.advance(1_000)
    engine.cacheState('leases', undefined)
    engine.cacheState('pools', undefined)
    expect(spells.at(-1)).to.deep.include({reason: 'watch-gap', lost: false})
    stop.abort()
  })
})
