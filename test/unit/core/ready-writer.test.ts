import {expect} from 'chai'
import {ConflictError, ForbiddenError} from '../../../src/core/errors.ts'
import {READY_WRITE_ATTEMPTS, writeReady} from '../../../src/core/ready-writer.ts'
import type {Pool} from '../../../src/core/types.ts'
import {FakeClock} from '../../support/fake-clock.ts'
import {FakePoolStatusStore} from '../../support/fake-stores.ts'

const NAME = 'p1'
const TRUE = {status: 'True', reason: 'HeartbeatReceived', message: 'machine runtime status probe succeeded'} as const

function seed(store: FakePoolStatusStore, over: Partial<Pool['status']> = {}): Pool {
  return store.put({
    apiVersion: 'compute.ironcore.dev/v1alpha1',
    kind: 'MachinePool',
    metadata: {name: NAME, generation: 2},
    status: {
      state: 'Ready',
      availableMachineClasses: [{name: 'x'}],
      conditions: [{type: 'Scheduled', status: 'True', reason: 'R', message: 'm'}],
      ...over,
    },
  })
}

describe('writeReady', () => {
  let clock: FakeClock
  let store: FakePoolStatusStore
  beforeEach(() => {
    clock = new FakeClock()
    store = new FakePoolStatusStore()
  })

  it('changes the Ready entry alone: other conditions and status fields survive', async () => {
    const before = seed(store)
    const result = await writeReady({store, clock, name: NAME, decide: () => TRUE})
    expect(result.outcome).to.equal('written')
    const after = store.peek(NAME)
    expect(after?.status?.state).to.equal('Ready')
    expect(after?.status?.availableMachineClasses).to.deep.equal([{name: 'x'}])
    expect(after?.status?.conditions?.[0]).to.deep.equal(before.status?.conditions?.[0])
    expect(after?.status?.conditions?.[1]).to.include({type: 'Ready', ...TRUE})
  })

  it('writes nothing when Ready already means the decision', async () => {
    seed(store, {conditions: [{type: 'Ready', ...TRUE, lastUpdateTime: 'old'}]})
    store.script.forbid('writeConditions')
    const result = await writeReady({store, clock, name: NAME, decide: () => TRUE})
    expect(result.outcome).to.equal('unchanged')
  })

  it('on a conflict reads again and decides again from the new pool', async () => {
    seed(store)
    // Another writer bumps the generation just before our write: our resourceVersion is stale.
    store.script.beforeCall('writeConditions', 1, () => {
      const pool = store.peek(NAME)
      if (pool) store.put({...pool, metadata: {...pool.metadata, generation: 3}})
    })
    const seen: number[] = []
    const result = await writeReady({
      store,
      clock,
      name: NAME,
      decide: (pool) => {
        seen.push(pool.metadata.generation ?? 0)
        return {...TRUE, observedGeneration: pool.metadata.generation}
      },
    })
    expect(result.outcome).to.equal('written')
    expect(seen).to.deep.equal([2, 3])
    expect(store.script.calls('get')).to.equal(2)
    expect(findReady(store.peek(NAME))?.observedGeneration).to.equal(3)
  })

  it(`gives up after ${READY_WRITE_ATTEMPTS} conflicts and throws the last one`, async () => {
    seed(store)
    store.script.failNext('writeConditions', () => new ConflictError('modified'), READY_WRITE_ATTEMPTS)
    let thrown: unknown
    try {
      await writeReady({store, clock, name: NAME, decide: () => TRUE})
    } catch (error) {
      thrown = error
    }
    expect(thrown).to.be.instanceOf(ConflictError)
    expect(store.script.calls('writeConditions')).to.equal(READY_WRITE_ATTEMPTS)
  })

  it('throws errors other than conflicts at once', async () => {
    seed(store)
    store.script.failNext('writeConditions', () => new ForbiddenError('no'))
    let thrown: unknown
    try {
      await writeReady({store, clock, name: NAME, decide: () => TRUE})
    } catch (error) {
      thrown = error
    }
    expect(thrown).to.be.instanceOf(ForbiddenError)
    expect(store.script.calls('writeConditions')).to.equal(1)
  })

  it('reports not-found when the pool does not exist', async () => {
    const result = await writeReady({store, clock, name: NAME, decide: () => TRUE})
    expect(result.outcome).to.equal('not-found')
  })

  it('reports not-found when the pool is deleted before the write', async () => {
    seed(store)
    store.script.beforeCall('writeConditions', 1, () => store.delete(NAME))
    const result = await writeReady({store, clock, name: NAME, decide: () => TRUE})
    expect(result.outcome).to.equal('not-found')
  })

  it('uses a pool in hand instead of reading', async () => {
    const pool = seed(store)
    store.script.forbid('get')
    const result = await writeReady({store, clock, name: NAME, decide: () => TRUE, current: pool})
    expect(result.outcome).to.equal('written')
  })
})

function findReady(pool: Pool | undefined) {
  return pool?.status?.conditions?.find((c) => c.type === 'Ready')
}
