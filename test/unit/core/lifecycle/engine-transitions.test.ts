/**
 * The engine's transitions that no test asserted until `npm run mutation` showed them undefended
 * (issue 30): a whole view again resets a backoff grown with the outage, a repeated setLeader or
 * setViewWhole is a no-op (it must not abort what is in flight), the era's abort reasons, and the evidence age after a spell that lost events.
 */
import {expect} from 'chai'
import type {Lease} from '../../../../src/core/types.ts'
import {GRACE, LifecycleFixture} from '../../../support/lifecycle-fixture.ts'

function manualConfirm() {
  const pending: {name: string; signal: AbortSignal; resolve: (lease: Lease | undefined) => void}[] = []
  const confirmLease = (name: string, signal: AbortSignal) => new Promise<Lease | undefined>((resolve) => pending.push({name, signal, resolve}))
  return {pending, confirmLease}
}

describe('controller lifecycle: transitions', () => {
  it('whole again after a blind spell, a pool waiting out a retry backoff grown with the outage is looked at at once', async () => {
    const fx = new LifecycleFixture({retryBaseMs: 1_000, retryMaxMs: 10_000})
    fx.putPool('p', {ready: 'True'})
    fx.store.script.failNext('writeConditions', () => new Error('etcdserver: request timed out'), 1_000)
    await fx.advance(GRACE)
    for (let i = 0; i < 30; i++) await fx.advance(1_000) // retries back off to the 10 s cap
    const next = fx.engine.nextLook('p')
    expect(next, 'a retry is armed').to.not.equal(undefined)
    fx.store.script.stopFailing('writeConditions')
    fx.engine.setViewWhole(false)
    fx.engine.setViewWhole(true)
    await fx.advance(0)
    expect(fx.marks.map((m) => m.name), 'marked now, not at the backoff\'s end').to.deep.equal(['p'])
  })

  it('a repeated setLeader(true) or setViewWhole(true) aborts nothing: the confirming read in flight goes on and the pool is marked', async () => {
    const confirm = manualConfirm()
    const fx = new LifecycleFixture({confirmLease: confirm.confirmLease})
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE)
    const read = confirm.pending[0]!
    fx.engine.setLeader(true)
    fx.engine.setViewWhole(true)
    expect(read.signal.aborted).to.equal(false)
    read.resolve(undefined)
    await fx.advance(0)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
  })

  it('the era\'s end aborts what is in flight with its reason: "leadership lost", or "the lifecycle engine stopped" at close()', async () => {
    const confirm = manualConfirm()
    const fx = new LifecycleFixture({confirmLease: confirm.confirmLease})
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE)
    fx.engine.setLeader(false)
    expect((confirm.pending[0]?.signal.reason as Error).message).to.equal('leadership lost')
    fx.engine.setLeader(true)
    await fx.advance(0)
    const read = confirm.pending.at(-1)!
    expect(read.signal.aborted).to.equal(false)
    await fx.engine.close()
    expect((read.signal.reason as Error).message).to.equal('the lifecycle engine stopped')
  })

  it('the evidence age restarts at a spell that may have lost events, and counts whole time only', async () => {
    const fx = new LifecycleFixture()
    await fx.advance(GRACE)
    expect(fx.engine.evidenceAgeMs()).to.equal(GRACE)
    fx.engine.setViewWhole(false)
    await fx.advance(10_000)
    fx.engine.setViewWhole(true, {sinceMs: 0, lost: true})
    expect(fx.engine.evidenceAgeMs()).to.equal(0)
    await fx.advance(1_000)
    expect(fx.engine.evidenceAgeMs()).to.equal(1_000)
  })

  it('a standby (not leader) judges nothing, so it strands nothing: strandedPools() is empty however long its pools are silent', async () => {
    const fx = new LifecycleFixture({active: false})
    fx.engine.setViewWhole(true)
    fx.putPool('p', {ready: 'True'})
    await fx.advance(2 * GRACE)
    expect(fx.engine.strandedPools()).to.deep.equal([])
    expect(fx.writes).to.equal(0)
  })

  it('a new leadership starts each overdue pool\'s attempts afresh: the failures of the era before are not its retries', async () => {
    const fx = new LifecycleFixture({retryBaseMs: 1_000, retryMaxMs: 10_000})
    fx.putPool('p', {ready: 'True'})
    fx.store.script.failNext('writeConditions', () => new Error('etcdserver: request timed out'), 1_000)
    await fx.advance(GRACE)
    for (let i = 0; i < 30; i++) await fx.advance(1_000)
    fx.store.script.stopFailing('writeConditions')
    fx.engine.setLeader(false)
    fx.engine.setLeader(true)
    await fx.advance(0)
    expect(fx.marks.map((m) => `${m.name} after ${m.retries} retries`)).to.deep.equal(['p after 0 retries'])
  })

  it('close() resolves only once the write in flight has been answered (a write does not stop at the abort: its outcome is the API\'s)', async () => {
    const fx = new LifecycleFixture()
    fx.putPool('p', {ready: 'True'})
    const write = fx.store.writeConditions.bind(fx.store)
    let answer: (() => void) | undefined
    fx.store.writeConditions = (...args) => new Promise((resolve, reject) => (answer = () => void write(...args).then(resolve, reject)))
    await fx.advance(GRACE)
    expect(answer, 'the write went out').to.not.equal(undefined)
    let closed = false
    void fx.engine.close().then(() => (closed = true))
    await fx.advance(0)
    expect(closed, 'waiting for the write').to.equal(false)
    answer?.()
    await fx.advance(0)
    expect(closed).to.equal(true)
  })

  it('whole again, a breaker\'s hold of a newly silent pool runs on: the pool is not looked at before the hold ends', async () => {
    const fx = new LifecycleFixture({maxUnhealthy: {kind: 'count', count: 2}, breakerHoldMs: 5_000})
    fx.putPool('p', {ready: 'True'})
    await fx.advance(GRACE)
    expect(fx.engine.verdict('p')?.state).to.equal('held')
    fx.engine.setViewWhole(false)
    fx.engine.setViewWhole(true)
    await fx.advance(4_999)
    expect(fx.marks).to.deep.equal([])
    await fx.advance(1)
    expect(fx.marks.map((m) => m.name)).to.deep.equal(['p'])
  })

  it('a blind spell seen late that undoes the silence which tripped the breaker closes it as the view turns whole', async () => {
    const fx = new LifecycleFixture({maxUnhealthy: {kind: 'count', count: 2}})
    for (const name of ['a', 'b', 'c', 'd', 'e']) fx.putPool(name, {ready: 'True'})
    for (let i = 1; i <= 5; i++) {
      await fx.advance(GRACE / 5)
      fx.renew('d', `r${i}`)
      fx.renew('e', `r${i}`)
    }
    await fx.advance(1_000)
    expect(fx.engine.breakerState.tripped).to.equal(true)
    // The view was blind since before a, b and c fell due: their silence past the grace is cut out.
    fx.engine.setViewWhole(false, {sinceMs: 2_000, lost: false})
    fx.engine.setViewWhole(true)
    expect(fx.engine.breakerState.tripped).to.equal(false)
    expect(fx.writes).to.equal(0)
  })
})
