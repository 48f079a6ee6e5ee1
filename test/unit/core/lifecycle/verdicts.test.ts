/**
 * The rules that keep a verdict trustworthy when things stall: confirm before marking, judge only
 * while the sight vouches for the view, monotonic time only, a new UID is a new pool, and a breaker
 * that counts only the pools a mark would change.
 */
import {expect} from 'chai'
import type {Lease, Pool, PoolCondition} from '../../../../src/core/types.ts'
import {GRACE, LifecycleFixture} from '../../../support/lifecycle-fixture.ts'

const HOUR = 3_600_000

/** A confirming read the test answers by hand. */
function manualConfirm() {
  const pending: {name: string; signal: AbortSignal; resolve: (lease: Lease | undefined) => void; reject: (error: Error) => void}[] = []
  const confirmLease = (name: string, signal: AbortSignal) =>
    new Promise<Lease | undefined>((resolve, reject) => pending.push({name, signal, resolve, reject}))
  return {pending, confirmLease}
}

describe('controller lifecycle: trustworthy verdicts', () => {
  describe('confirm before marking', () => {
    it('reads the Lease before marking, and does not mark a pool whose Lease moved unseen by the watch', async () => {
      const fx = new LifecycleFixture()
      const found: string[] = []
      fx.engine['options'].observer.confirmRead = (name, outcome) => found.push(`${name}:${outcome}`)
      fx.putPool('p', {ready: 'True'})
      fx.renew('p', 'r1')
      await fx.advance(GRACE / 2)
      fx.renewUnseen('p', 'r2')
      await fx.advance(GRACE / 2)
      expect(fx.writes, 'the fresh read shows progress').to.equal(0)
      expect(found).to.deep.equal(['p:renewed'])
      expect(fx.engine.record('p')?.renewTime).to.equal('r2')
      // The renewal found counts as progress: the grace period runs again from the read.
      await fx.advance(GRACE - 1)
      expect(fx.writes).to.equal(0)
      await fx.advance(1)
      expect(fx.writes).to.equal(1)
      expect(fx.ready('p')?.status).to.equal('Unknown')
    })

    it('marks when the fresh read shows the renewal last seen, or no Lease at all', async () => {
      const fx = new LifecycleFixture()
      fx.putPool('seen', {ready: 'True'})
      fx.renew('seen', 'r1')
      fx.putPool('none', {ready: 'True'})
      await fx.advance(GRACE)
      expect(['seen', 'none'].map((n) => fx.ready(n)?.status)).to.deep.equal(['Unknown', 'Unknown'])
    })

    it('reads a renewal that arrives while the confirming read is in flight first: no mark', async () => {
      const confirm = manualConfirm()
      const fx = new LifecycleFixture({confirmLease: confirm.confirmLease})
      fx.putPool('p', {ready: 'True'})
      fx.renew('p', 'r1')
      await fx.advance(GRACE)
      expect(confirm.pending.map((c) => c.name)).to.deep.equal(['p'])
      // The watch event that was waiting in the socket is read before the read's answer.
      fx.renew('p', 'r2')
      confirm.pending[0]!.resolve(fx.apiLeases.get('p'))
      await fx.advance(0)
      expect(fx.writes).to.equal(0)
    })

    it('treats a failed read as that pool’s trouble, not a verdict: tells the sight, marks nothing, retries the pool', async () => {
      const confirm = manualConfirm()
      const failures: string[] = []
      const fx = new LifecycleFixture({confirmLease: confirm.confirmLease, onRequest: (ok, detail) => failures.push(ok ? 'ok' : (detail ?? ''))})
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE)
      confirm.pending.shift()!.reject(new Error('get lease: connection refused'))
      await fx.advance(0)
      expect(failures).to.deep.equal(['confirming the silence of machinepool p: get lease: connection refused'])
      expect(fx.writes).to.equal(0)
      expect(fx.logger.at('error').map((e) => e.msg)).to.deep.equal(['reading its Lease to confirm the silence failed'])
      // The retry after the backoff reads again; this time the API answers and the silence is confirmed.
      await fx.advance(1000)
      expect(confirm.pending).to.have.length(1)
      confirm.pending.shift()!.resolve(undefined)
      await fx.advance(0)
      expect(fx.writes).to.equal(1)
    })

    it('gives up on a read that hangs at the confirm timeout, aborting it, and marks nothing', async () => {
      const confirm = manualConfirm()
      const failures: string[] = []
      const fx = new LifecycleFixture({confirmLease: confirm.confirmLease, confirmTimeoutMs: 2000, onRequest: (ok) => failures.push(ok ? 'ok' : 'failed')})
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE)
      const hung = confirm.pending[0]!
      await fx.advance(1999)
      expect(failures).to.deep.equal([])
      await fx.advance(1)
      expect(failures).to.deep.equal(['failed'])
      expect(hung.signal.aborted).to.be.true
      expect(fx.writes).to.equal(0)
      // The failure says which read and how long it waited.
      expect(JSON.stringify(fx.logger.entries)).to.contain(`get lease ${fx.kind.leaseNamespace}/p: no answer within 2000 ms`)
    })

    it('close() aborts a confirming read in flight and writes nothing after it', async () => {
      const confirm = manualConfirm()
      const fx = new LifecycleFixture({confirmLease: confirm.confirmLease})
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE)
      const closed = fx.engine.close()
      expect(confirm.pending[0]!.signal.aborted).to.be.true
      confirm.pending[0]!.reject(new Error('aborted'))
      await closed
      await fx.advance(GRACE)
      expect(fx.writes).to.equal(0)
    })
  })

  describe('no write outlives the period it was made in', () => {
    for (const [what, end] of [['leadership is lost', (fx: LifecycleFixture) => fx.engine.setLeader(false)]] as const) {
      it(`aborts the Unknown write in flight when ${what}; nothing lands afterwards`, async () => {
        const fx = new LifecycleFixture()
        const held: {signal: AbortSignal | undefined; release: () => void}[] = []
        const write = fx.store.writeConditions.bind(fx.store)
        fx.store.writeConditions = (name: string, rv: string, conditions: PoolCondition[], signal?: AbortSignal) =>
          new Promise<Pool>((resolve, reject) => {
            const release = () => (signal?.aborted ? reject(signal.reason as Error) : resolve(write(name, rv, conditions)))
            signal?.addEventListener('abort', () => reject(signal.reason as Error), {once: true})
            held.push({signal, release})
          })
        fx.putPool('p', {ready: 'True'})
        await fx.advance(GRACE)
        expect(held).to.have.length(1)
        end(fx)
        expect(held[0]!.signal?.aborted).to.be.true
        held[0]!.release()
        await fx.advance(0)
        expect(fx.ready('p')?.status).to.equal('True')
        expect(fx.marks).to.deep.equal([])
        expect(fx.logger.at('error'), 'an aborted write is no failure').to.deep.equal([])
      })
    }
  })

  describe('the sight', () => {
    it('judges nothing when canJudge() says no at the deadline, and asks again at the next one', async () => {
      let sees = false
      const fx = new LifecycleFixture({canJudge: () => sees})
      fx.putPool('p', {ready: 'True'})
      await fx.advance(3 * GRACE)
      expect(fx.writes).to.equal(0)
      sees = true
      await fx.advance(1000)
      expect(fx.ready('p')?.status, 'looked at again one retry later').to.equal('Unknown')
      fx.putPool('q', {ready: 'True'})
      await fx.advance(GRACE)
      expect(fx.ready('q')?.status).to.equal('Unknown')
    })

    it('a sight that reports blindness from canJudge() holds the verdict; once whole again the pool is judged at once', async () => {
      const fx = new LifecycleFixture()
      let blindOnce = true
      fx.engine['options'].canJudge = () => {
        if (!blindOnce) return true
        blindOnce = false
        fx.engine.setViewWhole(false)
        return false
      }
      fx.putPool('p', {ready: 'True'})
      await fx.advance(GRACE)
      expect(fx.writes).to.equal(0)
      await fx.advance(GRACE)
      expect(fx.writes, 'blind: nothing').to.equal(0)
      fx.engine.setViewWhole(true)
      await fx.advance(0)
      expect(fx.marks.map((m) => [m.name, m.delayMs])).to.deep.equal([['p', 0]])
    })
  })

  describe('monotonic time only', () => {
    for (const step of [+HOUR, -HOUR]) {
      it(`a wall-clock step of ${step > 0 ? '+' : '-'}1h marks no live pool and delays no silent one`, async () => {
        const fx = new LifecycleFixture()
        fx.putPool('live', {ready: 'True'})
        fx.putPool('silent', {ready: 'True'})
        const t0 = fx.clock.monotonic()
        await fx.advance(GRACE / 4)
        fx.renew('live', 'r1')
        fx.clock.stepWall(step)
        for (let i = 2; i <= 8; i++) {
          await fx.advance(GRACE / 4)
          fx.renew('live', `r${i}`)
        }
        expect(fx.ready('live')?.status).to.equal('True')
        expect(fx.marks.map((m) => [m.name, m.writtenAt - t0])).to.deep.equal([['silent', GRACE]])
      })
    }
  })

  describe('identity', () => {
    it('a pool deleted and created again under the same name (a new UID) gets a fresh grace period', async () => {
      const fx = new LifecycleFixture()
      fx.putPool('p', {uid: 'uid-1', ready: 'True'})
      await fx.advance(GRACE - 1000)
      // The delete was never seen (it happened during a relist): only the new object arrives.
      fx.putPool('p', {uid: 'uid-2', ready: 'True'})
      expect(fx.engine.record('p')?.uid).to.equal('uid-2')
      await fx.advance(1000)
      expect(fx.writes, 'the new pool inherits nothing of the old one’s silence').to.equal(0)
      await fx.advance(GRACE - 1000)
      expect(fx.writes).to.equal(1)
    })

    it('a new UID while overdue forgets the old pool’s retry', async () => {
      const confirm = manualConfirm()
      const fx = new LifecycleFixture({confirmLease: confirm.confirmLease})
      fx.putPool('p', {uid: 'uid-1', ready: 'True'})
      await fx.advance(GRACE)
      confirm.pending.shift()!.reject(new Error('timeout'))
      await fx.advance(0)
      fx.putPool('p', {uid: 'uid-2', ready: 'True'})
      await fx.advance(GRACE - 1)
      expect(confirm.pending, 'no retry for the old pool').to.have.length(0)
      await fx.advance(1)
      expect(confirm.pending).to.have.length(1)
    })
  })

  describe('--max-unhealthy', () => {
    it('does not count pools already Unknown: long-dead pools never keep the breaker tripped', async () => {
      const fx = new LifecycleFixture({maxUnhealthy: {kind: 'count', count: 1}})
      for (const name of ['dead-1', 'dead-2', 'dead-3']) fx.putPool(name, {ready: 'Unknown', reason: 'MachinePoolStatusUnknown'})
      fx.putPool('fresh', {ready: 'True'})
      await fx.advance(GRACE + GRACE / 5)
      expect(fx.breakers, 'one new failure is within the limit').to.deep.equal([])
      expect(fx.ready('fresh')?.status).to.equal('Unknown')
      expect(fx.writes).to.equal(1)
    })

    it('still trips when more pools than allowed would be newly marked at once', async () => {
      const fx = new LifecycleFixture({maxUnhealthy: {kind: 'count', count: 1}})
      fx.putPool('dead', {ready: 'Unknown', reason: 'MachinePoolStatusUnknown'})
      fx.putPool('a', {ready: 'True'})
      fx.putPool('b', {ready: 'True'})
      await fx.advance(GRACE)
      expect(fx.breakers.map((b) => [b.transition, b.unhealthy])).to.deep.equal([['tripped', 2]])
      expect(fx.writes).to.equal(0)
    })
  })
})
