/**
 * The engine at its edges: what a pool gone or replaced, or a change of leadership or evidence, leaves
 * behind for the breaker; a mark of another replica seen while our write is out; close() with a read
 * back armed; a spell seen late that ends at a pool's own deadline; what survives a blind spell.
 */
import {expect} from 'chai'
import type {PoolCondition} from '../../../../src/core/types.ts'
import {parseMaxUnhealthy} from '../../../../src/core/lifecycle/mass-silence/max-unhealthy.ts'
import {GRACE, LifecycleFixture, markOut, tripBreaker, type FixtureOptions} from '../../../support/lifecycle-fixture.ts'

/**
 * --max-unhealthy 1 with a window of ten grace periods: one silent pool is judged (after a hold of
 * 1 s), a second within the window trips the breaker.
 */
const ONE_AT_A_TIME: FixtureOptions = {maxUnhealthy: parseMaxUnhealthy('1'), breakerWindowMs: 10 * GRACE, breakerHoldMs: 1_000}

/** Pool a falls silent at GRACE and is marked; b renews until `bRenewsUntil`, then falls silent. */
async function aMarkedThen(fx: LifecycleFixture, between: () => void | Promise<void>, bRenewsUntil = 2 * GRACE) {
  fx.putPool('a', {ready: 'True'})
  fx.putPool('b', {ready: 'True'})
  for (let t = 5_000; t <= bRenewsUntil; t += 5_000) {
    await fx.advance(5_000)
    if (t === GRACE + 5_000) {
      expect(fx.marks.map((m) => m.name), 'a marked').to.deep.equal(['a'])
      await between()
    }
    fx.renew('b', `r${t}`)
  }
  await fx.advance(GRACE + 5_000)
}

describe('controller lifecycle: edges', () => {
  describe('what the breaker counts', () => {
    it('a pool deleted after it fell silent no longer counts as silent: the next silent pool alone is marked', async () => {
      const fx = new LifecycleFixture(ONE_AT_A_TIME)
      await aMarkedThen(fx, () => fx.deletePool('a'))
      expect(fx.breakers).to.deep.equal([])
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['a', 'b'])
    })

    it('a new pool under the name of one that fell silent does not carry its silence', async () => {
      const fx = new LifecycleFixture(ONE_AT_A_TIME)
      fx.putPool('a', {ready: 'True'})
      fx.putPool('b', {ready: 'True'})
      for (let t = 5_000; t <= 2 * GRACE; t += 5_000) {
        await fx.advance(5_000)
        fx.renew('b', `r${t}`)
      }
      expect(fx.marks.map((m) => m.name), 'a marked').to.deep.equal(['a'])
      await fx.advance(20_000)
      // A new a (its grace period runs to 170 s); b falls silent at 150 s.
      fx.putPool('a', {uid: 'uid-a-2', ready: 'True'})
      await fx.advance(40_000)
      expect(fx.breakers, 'b alone went silent in the window').to.deep.equal([])
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['a', 'b'])
    })

    it('a change of leadership forgets who went silent: a pool marked before it does not count with the next', async () => {
      const fx = new LifecycleFixture(ONE_AT_A_TIME)
      await aMarkedThen(fx, () => {
        fx.engine.setLeader(false)
        fx.engine.setLeader(true)
      })
      expect(fx.breakers).to.deep.equal([])
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['a', 'b'])
    })

    it('a new leader judges the breaker afresh at once: the old trip is over the instant leadership is regained', async () => {
      const fx = new LifecycleFixture({maxUnhealthy: parseMaxUnhealthy('2')})
      await tripBreaker(fx)
      expect(fx.engine.breakerState.tripped).to.equal(true)
      fx.engine.setLeader(false)
      fx.engine.setLeader(true)
      expect(fx.engine.breakerState.tripped).to.equal(false)
      expect(fx.breakers.map((b) => b.transition)).to.deep.equal(['tripped', 'recovered'])
    })
  })

  it('a mark of another replica that the watch shows while our write is out is not ours: lost with the answer, it is not reported', async () => {
    const {fx, held} = await markOut()
    expect(held).to.have.length(1)
    // Another replica's Unknown (its own lastTransitionTime) lands first, and the watch shows it.
    const pool = fx.store.peek('p')!
    const theirs: PoolCondition = {type: 'Ready', status: 'Unknown', reason: 'MachinePoolStatusUnknown', message: 'machinepoollet stopped posting machine pool status.', lastTransitionTime: '2026-01-01T00:00:49Z', observedGeneration: 1}
    fx.store.put({...pool, status: {...pool.status, conditions: [theirs]}})
    fx.deliver('p')
    held[0]!.fail(new Error('no answer within 5000 ms'))
    await fx.advance(0)
    expect(fx.marks).to.deep.equal([])
    expect(fx.events.events).to.deep.equal([])
  })

  it('close() cancels a read back armed for a write of unknown outcome whose era ended', async () => {
    const {fx, held} = await markOut()
    fx.engine.setLeader(false)
    fx.store.script.failNext('get', () => new Error('no answer within 5000 ms'))
    held[0]!.fail(new Error('leadership lost'))
    await fx.clock.advance(0)
    expect(fx.clock.pending, 'the read back, armed').to.equal(1)
    await fx.engine.close()
    expect(fx.clock.pending).to.equal(0)
  })

  describe('whole again after a spell seen late, which began at a pool’s deadline', () => {
    /** p fell due at GRACE, its confirming read failed (retrying); blind from 0.5 s later, seen as of GRACE. */
    async function retryingThenBlind() {
      let confirms = 0
      const fx = new LifecycleFixture({
        confirmLease: () => {
          confirms++
          return confirms === 1 ? Promise.reject(new Error('connection reset')) : Promise.resolve(undefined)
        },
      })
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE + 500)
      fx.engine.setViewWhole(false, {sinceMs: 500, lost: false})
      await fx.advance(10_000)
      return {fx, confirms: () => confirms}
    }

    it('the pool is still overdue, not newly silent: looked at at once, its backoff reset', async () => {
      const {fx, confirms} = await retryingThenBlind()
      expect(confirms()).to.equal(1)
      fx.engine.setViewWhole(true)
      await fx.advance(0)
      expect(confirms(), 'confirmed again at once').to.equal(2)
      expect(fx.fellSilent).to.deep.equal([{name: 'p', at: GRACE}])
      expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
    })
  })

  it('a marked pool keeps its record across a blind spell: the retries it took are not reset', async () => {
    let confirms = 0
    const fx = new LifecycleFixture({
      confirmLease: () => {
        confirms++
        return confirms === 1 ? Promise.reject(new Error('connection reset')) : Promise.resolve(undefined)
      },
    })
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE + 5_000)
    expect(fx.marks.map((m) => [m.name, m.retries])).to.deep.equal([['p', 1]])
    fx.engine.setViewWhole(false)
    await fx.advance(1_000)
    fx.engine.setViewWhole(true)
    await fx.advance(0)
    expect(fx.engine.verdict('p')).to.deep.include({state: 'marked', retries: 1})
  })

  it('a dry run respects a pool Unknown at first sight, however often the watch shows it Unknown again', async () => {
    const fx = new LifecycleFixture({dryRun: true})
    fx.putPool('p', {ready: 'Unknown', reason: 'MachinePoolStatusUnknown'})
    await fx.advance(10_000)
    fx.putPool('p', {ready: 'Unknown', reason: 'MachinePoolStatusUnknown', message: 'still'})
    await fx.advance(2 * GRACE)
    expect(fx.wouldMarks).to.deep.equal([])
  })
})
