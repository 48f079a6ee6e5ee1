/**
 * The request limiter: how many wait, a call whose signal aborts before it started (never made, its
 * place and slot given back at once), and the slot of a call whose signal aborts after it started.
 */
import {expect} from 'chai'
import {RequestLimiter} from '../../../../src/core/lifecycle/request-limiter.ts'
import {FakeClock} from '../../../support/fake-clock.ts'

/** A call that records when it was made and stays out until the test ends it. */
function calls(clock: FakeClock) {
  const made: Record<string, number> = {}
  const end: Record<string, () => void> = {}
  const call = (name: string) => () => {
    made[name] = clock.monotonic()
    return new Promise<string>((resolve) => (end[name] = () => resolve(name)))
  }
  return {made, end, call}
}

/** Where a promise stands, without waiting for it. */
function track<T>(promise: Promise<T>) {
  const state: {settled?: 'resolved' | 'rejected'; value?: T; error?: unknown} = {}
  promise.then(
    (value) => Object.assign(state, {settled: 'resolved', value}),
    (error: unknown) => Object.assign(state, {settled: 'rejected', error}),
  )
  return state
}

describe('RequestLimiter', () => {
  it('counts the calls waiting in both lanes, and those in flight', async () => {
    const clock = new FakeClock()
    const limiter = new RequestLimiter(clock, {qps: 1000, burst: 1000, concurrency: 1})
    const {call} = calls(clock)
    void limiter.run(call('a'))
    void limiter.run(call('b'), {urgent: true})
    void limiter.run(call('c'))
    void limiter.run(call('d'))
    await clock.advance(0)
    expect(limiter.inFlight).to.equal(1)
    expect(limiter.queued).to.equal(3)
  })

  it('a call whose signal aborted already is refused with its reason and never made', async () => {
    const clock = new FakeClock()
    const limiter = new RequestLimiter(clock)
    const {made, call} = calls(clock)
    const signal = AbortSignal.abort(new Error('era over'))
    const state = track(limiter.run(call('a'), {signal}))
    await clock.advance(0)
    expect(state).to.deep.include({settled: 'rejected'})
    expect((state.error as Error).message).to.equal('era over')
    expect(made).to.deep.equal({})
    expect(limiter.inFlight).to.equal(0)
  })

  it('a call aborted while it waits for a slot leaves the queue at once, refused with its reason, and is never made', async () => {
    const clock = new FakeClock()
    const limiter = new RequestLimiter(clock, {qps: 1000, burst: 1000, concurrency: 1})
    const {made, end, call} = calls(clock)
    void limiter.run(call('a'))
    const stop = new AbortController()
    const b = track(limiter.run(call('b'), {signal: stop.signal}))
    const c = track(limiter.run(call('c')))
    await clock.advance(0)
    expect(limiter.queued).to.equal(2)
    stop.abort(new Error('era over'))
    await clock.advance(0)
    expect(b.settled, 'refused at once, while a is still out').to.equal('rejected')
    expect((b.error as Error).message).to.equal('era over')
    expect(limiter.queued).to.equal(1)
    end.a!()
    await clock.advance(0)
    expect(Object.keys(made)).to.deep.equal(['a', 'c'])
    end.c!()
    await clock.advance(0)
    expect(c.settled).to.equal('resolved')
  })

  it('a call aborted while it waits for its token frees its slot at once: the next takes it (the spent token makes it wait its turn)', async () => {
    const clock = new FakeClock()
    // One token a second, two in flight at most.
    const limiter = new RequestLimiter(clock, {qps: 1, burst: 1, concurrency: 2})
    const {made, end, call} = calls(clock)
    void limiter.run(call('a'))
    const stop = new AbortController()
    const b = track(limiter.run(call('b'), {signal: stop.signal}))
    const c = track(limiter.run(call('c')))
    await clock.advance(100)
    expect(limiter.inFlight, 'a out, b holding a slot for its token').to.equal(2)
    expect(limiter.queued).to.equal(1)
    stop.abort(new Error('era over'))
    await clock.advance(0)
    expect(b.settled).to.equal('rejected')
    expect((b.error as Error).message).to.equal('era over')
    expect(limiter.queued, 'c took the slot').to.equal(0)
    expect(limiter.inFlight).to.equal(2)
    // b's token (due at 1 s) was spent: c's is due at 2 s.
    await clock.advance(1_899)
    expect(made).to.deep.equal({a: 0})
    await clock.advance(1)
    expect(made).to.deep.equal({a: 0, c: 2_000})
    expect(limiter.inFlight).to.equal(2)
    end.a!()
    end.c!()
    await clock.advance(0)
    expect(c.settled).to.equal('resolved')
    expect(limiter.inFlight).to.equal(0)
  })

  it('a signal that aborts after its call was made changes nothing: the call keeps its slot until it ends', async () => {
    const clock = new FakeClock()
    const limiter = new RequestLimiter(clock, {qps: 1, burst: 1, concurrency: 1})
    const {made, end, call} = calls(clock)
    void limiter.run(call('a'))
    await clock.advance(0)
    end.a!()
    const stop = new AbortController()
    // b waits for its token (1 s), then is made.
    const b = track(limiter.run(call('b'), {signal: stop.signal}))
    void limiter.run(call('c'))
    await clock.advance(1_000)
    expect(made).to.have.property('b', 1_000)
    stop.abort(new Error('era over'))
    await clock.advance(5_000)
    expect(limiter.inFlight, 'b is still out').to.equal(1)
    expect(made, 'c waits for b’s slot').to.not.have.property('c')
    end.b!()
    await clock.advance(0)
    expect(b.settled).to.equal('resolved')
    expect(made).to.have.property('c', 6_000)
  })
})
