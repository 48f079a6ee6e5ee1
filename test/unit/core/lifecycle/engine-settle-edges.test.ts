/**
 * Writes of unknown outcome at their edges: read back again at the pool's retry when the watch shows
 * another's Unknown (our mark found then is reported; a read that fails is a failure logged and retried),
 * read back no more once a read showed it did not land, and no read back armed by close().
 */
import {expect} from 'chai'
import type {Pool, PoolCondition} from '../../../../src/core/types.ts'
import {GRACE, markOut, type LifecycleFixture} from '../../../support/lifecycle-fixture.ts'

/** Another replica's Unknown on p (its own lastTransitionTime), as the watch delivers it. */
function theirMark(fx: LifecycleFixture): void {
  const pool = fx.store.peek('p')!
  const theirs: PoolCondition = {type: 'Ready', status: 'Unknown', reason: 'MachinePoolStatusUnknown', message: 'machinepoollet stopped posting machine pool status.', lastTransitionTime: '2026-01-01T00:00:49Z', observedGeneration: 1}
  fx.store.put({...pool, status: {...pool.status, conditions: [theirs]}})
  fx.deliver('p')
}

/**
 * p's write is out; the watch shows another replica's Unknown; then ours lands over it unseen (unless
 * `lands` is false), its answer is lost and the read back fails: p is Unknown to the engine, our write
 * unsettled.
 */
async function oursUnsettledUnderTheirs(lands = true) {
  const {fx, held} = await markOut()
  theirMark(fx)
  if (lands) held[0]!.land()
  fx.store.script.failNext('get', () => new Error('no answer within 5000 ms'))
  held[0]!.fail(new Error('no answer within 5000 ms'))
  await fx.clock.advance(0)
  expect(fx.marks, 'not known yet').to.deep.equal([])
  return {fx, held}
}

describe('controller lifecycle: writes of unknown outcome at their edges', () => {
  it('read back again at its retry though the pool shows Unknown: our mark found there is reported, once', async () => {
    const {fx} = await oursUnsettledUnderTheirs()
    // The retry's backoff (1 s): a second read back, which answers.
    await fx.clock.advance(1_000)
    expect(fx.store.script.calls('get')).to.equal(2)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
    expect(fx.logger.at('error').map((e) => e.msg)).to.deep.equal(['writing Ready=Unknown failed'])
    await fx.clock.advance(5 * GRACE)
    expect(fx.marks).to.have.length(1)
  })

  it('a read back at the retry that fails too is a failure of its own, logged, and tried again', async () => {
    const {fx} = await oursUnsettledUnderTheirs()
    fx.store.script.failNext('get', () => new Error('no answer within 5000 ms'))
    await fx.clock.advance(1_000)
    const errors = fx.logger.at('error')
    expect(errors.map((e) => e.msg)).to.deep.equal(['writing Ready=Unknown failed', 'reading back its Ready=Unknown write of unknown outcome failed'])
    expect(errors[1]!.obj).to.deep.include({kind: 'machine', pool: 'p', err: 'reading machinepool p back failed', retries: 2})
    // A read that failed is not the write's trouble: no WriteRetrying Event, though this is the second failure.
    expect(fx.events.events.map((e) => e.reason)).to.deep.equal([])
    // And again after the next backoff (2 s), which answers: reported.
    await fx.clock.advance(2_000)
    expect(fx.store.script.calls('get')).to.equal(3)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
  })

  it('read back at its retry and found not to have landed: settled, no failure, nothing reported', async () => {
    const {fx} = await oursUnsettledUnderTheirs(false)
    await fx.clock.advance(1_000)
    expect(fx.store.script.calls('get')).to.equal(2)
    expect(fx.logger.at('error').map((e) => e.msg)).to.deep.equal(['writing Ready=Unknown failed'])
    await fx.clock.advance(5 * GRACE)
    expect(fx.store.script.calls('get')).to.equal(2)
    expect(fx.marks).to.deep.equal([])
  })

  it('a read back at the retry that fails after leadership was lost is no failure of the new era: nothing logged', async () => {
    const {fx} = await oursUnsettledUnderTheirs()
    let failRead: (error: Error) => void = () => {}
    fx.store.get = () => new Promise<Pool | undefined>((_resolve, reject) => (failRead = reject))
    await fx.clock.advance(1_000)
    fx.engine.setLeader(false)
    failRead(new Error('no answer within 5000 ms'))
    await fx.clock.advance(0)
    expect(fx.logger.at('error').map((e) => e.msg)).to.deep.equal(['writing Ready=Unknown failed'])
  })

  it('a read back at the retry that fails after the pool showed life is no failure: nothing logged', async () => {
    const {fx} = await oursUnsettledUnderTheirs()
    let failRead: (error: Error) => void = () => {}
    fx.store.get = () => new Promise<Pool | undefined>((_resolve, reject) => (failRead = reject))
    await fx.clock.advance(1_000)
    fx.renew('p', 'alive')
    failRead(new Error('no answer within 5000 ms'))
    await fx.clock.advance(0)
    expect(fx.logger.at('error').map((e) => e.msg)).to.deep.equal(['writing Ready=Unknown failed'])
  })

  it('close() waits for a read back at the retry that is still out, and resolves once it ends', async () => {
    const {fx} = await oursUnsettledUnderTheirs()
    let failRead: (error: Error) => void = () => {}
    fx.store.get = () => new Promise<Pool | undefined>((_resolve, reject) => (failRead = reject))
    await fx.clock.advance(1_000)
    let closed = false
    void fx.engine.close().then(() => (closed = true))
    await fx.clock.advance(0)
    expect(closed, 'the read back is out').to.equal(false)
    failRead(new Error('no answer within 5000 ms'))
    await fx.clock.advance(0)
    expect(closed).to.equal(true)
  })

  it('a write whose era ended is read back once when that read shows it did not land: nothing armed after', async () => {
    const {fx, held} = await markOut()
    fx.engine.setLeader(false)
    held[0]!.fail(new Error('no answer within 5000 ms'))
    await fx.clock.advance(0)
    expect(fx.store.script.calls('get')).to.equal(1)
    expect(fx.clock.pending).to.equal(0)
    await fx.clock.advance(60_000)
    expect(fx.store.script.calls('get')).to.equal(1)
  })

  it('close() arms no read back for a write of unknown outcome still waiting for its retry', async () => {
    const {fx, held} = await markOut()
    fx.store.script.failNext('get', () => new Error('no answer within 5000 ms'))
    held[0]!.fail(new Error('no answer within 5000 ms'))
    await fx.clock.advance(0)
    await fx.engine.close()
    expect(fx.clock.pending).to.equal(0)
  })
})
