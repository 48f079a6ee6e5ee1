/**
 * Confirming reads at their edges: the threshold of a LIST exactly, who a LIST answers when several
 * turns run at once, places given back while the LIST is out, a LIST's deadline by its pages, what a
 * failed or slow LIST rejects with, and confirmations whose era ended.
 */
import {expect} from 'chai'
import {BATCH_CONFIRM_MIN, ConfirmBatcher, SharedFailure} from '../../../../src/core/lifecycle/confirm-batcher.ts'
import {RequestLimiter} from '../../../../src/core/lifecycle/request-limiter.ts'
import type {Lease} from '../../../../src/core/types.ts'
import {FakeClock} from '../../../support/fake-clock.ts'

const lease = (name: string): Lease => ({name, namespace: 'ns', spec: {renewTime: 't'}})

/** A batcher whose GETs answer after getMs and whose LISTs after listMs (or fail with listError). */
function setup(options: {concurrency?: number; listPages?: number; getMs?: number; listMs?: number; listError?: Error} = {}) {
  const clock = new FakeClock()
  const limiter = new RequestLimiter(clock, {qps: 1000, burst: 1000, concurrency: options.concurrency ?? 1})
  const requests: string[] = []
  const listedFor: string[][] = []
  const after = <T>(ms: number, fn: () => T) => new Promise<T>((resolve, reject) => clock.setTimer(ms, () => {
    try {
      resolve(fn())
    } catch (error) {
      reject(error instanceof Error ? error : new Error(String(error)))
    }
  }))
  const batcher = new ConfirmBatcher({
    clock,
    limiter: () => limiter,
    get: (name) => {
      requests.push(`get ${name}`)
      return after(options.getMs ?? 100, () => lease(name))
    },
    list: () => (_signal, names) => {
      requests.push('list')
      listedFor.push([...names].sort())
      return after(options.listMs ?? 100, () => {
        if (options.listError !== undefined) throw options.listError
        return [...names].map(lease)
      })
    },
    timeoutMs: 5_000,
    timeoutError: (what) => new Error(`${what}: no answer`),
    listPages: () => options.listPages ?? 1,
  })
  const confirm = (name: string, era: AbortSignal = new AbortController().signal) => {
    const outcome: {lease?: Lease; error?: Error} = {}
    const done = batcher.confirm(name, era).then(
      (l) => void (outcome.lease = l),
      (e: unknown) => void (outcome.error = e as Error),
    )
    return {outcome, done}
  }
  return {clock, limiter, requests, listedFor, batcher, confirm}
}

const names = (prefix: string, n: number) => Array.from({length: n}, (_, i) => `${prefix}${i}`)

describe('ConfirmBatcher: edges', () => {
  it(`exactly ${BATCH_CONFIRM_MIN - 1} waiting behind a turn get their own GETs; one more and a LIST answers them`, async () => {
    const few = setup()
    for (const n of names('p', BATCH_CONFIRM_MIN + 1)) few.confirm(n)
    // p0's GET went first, alone; at p1's turn 15 others wait: 16 in all, not more than 16.
    await few.clock.advance(10_000)
    expect(few.requests.filter((r) => r === 'list')).to.deep.equal([])
    const more = setup()
    for (const n of names('p', BATCH_CONFIRM_MIN + 2)) more.confirm(n)
    await more.clock.advance(10_000)
    expect(more.requests).to.deep.equal(['get p0', 'list'])
    expect(more.batcher.lists).to.equal(1)
  })

  it('gives back the places of those a LIST answers as it goes out, before its answer', async () => {
    const {clock, limiter, confirm} = setup({listMs: 1_000})
    for (const n of names('p', 30)) confirm(n)
    await clock.advance(500)
    expect(limiter.queued).to.equal(0)
    expect(limiter.inFlight).to.equal(1)
  })

  it('a LIST answers only those not yet started: neither a GET in flight beside it nor another LIST’s pools', async () => {
    const {clock, limiter, requests, listedFor, confirm} = setup({concurrency: 2, getMs: 2_000, listMs: 2_000})
    // x's GET holds one slot until 2 s; another call holds the other until 0.5 s.
    confirm('x')
    let endOther = () => {}
    void limiter.run(() => new Promise<void>((resolve) => (endOther = resolve)))
    const first = names('a', 20)
    for (const n of first) confirm(n)
    clock.setTimer(500, () => endOther())
    // At 0.5 s a0's turn lists for the a's (x's GET is out); at 1 s the b's ask.
    await clock.advance(1_000)
    const second = names('b', 20)
    for (const n of second) confirm(n)
    // x's GET answers at 2 s: b0 takes its slot, and lists for the b's alone (the a's LIST is still out).
    await clock.advance(5_000)
    expect(requests).to.deep.equal(['get x', 'list', 'list'])
    expect(listedFor).to.deep.equal([first.sort(), second.sort()])
  })

  it('a LIST of many pages gets 100 ms a page as its deadline: 200 pages, 20 s', async () => {
    const {clock, confirm} = setup({listPages: 200, listMs: 15_000})
    const all = names('p', 203).map((n) => confirm(n))
    await clock.advance(20_000)
    expect(all.filter((c) => c.outcome.error !== undefined)).to.deep.equal([])
    expect(all.at(-1)?.outcome.lease?.name).to.equal('p202')
  })

  it('a LIST that is slower than its deadline fails every confirmation it answers, naming how many pools it was for', async () => {
    const {clock, confirm} = setup({listMs: 60_000})
    const all = names('p', 20).map((n) => confirm(n))
    await clock.advance(20_000)
    expect(all[1]?.outcome.error?.message).to.equal('19 pools (a list of their namespace): no answer')
    expect(all[2]?.outcome.error).to.be.instanceOf(SharedFailure)
  })

  it('the others a failed LIST answered get a SharedFailure carrying the LIST’s error as its cause', async () => {
    const listError = new Error('HTTP 500')
    const {clock, confirm} = setup({listError})
    const all = names('p', 20).map((n) => confirm(n))
    await clock.advance(1_000)
    const shared = all[2]?.outcome.error
    expect(shared).to.be.instanceOf(SharedFailure)
    expect(String(shared)).to.equal('SharedFailure: HTTP 500')
    expect(shared?.cause).to.equal(listError)
    expect(all[1]?.outcome.error, 'the turn’s own').to.equal(listError)
  })

  it('confirmations whose era ended are forgotten: they neither count toward a LIST nor are listed', async () => {
    const {clock, requests, confirm} = setup()
    const first = confirm('first')
    const era = new AbortController()
    for (const n of names('gone', 20)) confirm(n, era.signal)
    await clock.advance(0)
    era.abort(new Error('leadership lost'))
    const later = ['x', 'y'].map((n) => confirm(n))
    await clock.advance(1_000)
    await first.done
    expect(later.map((c) => c.outcome.lease?.name)).to.deep.equal(['x', 'y'])
    expect(requests).to.deep.equal(['get first', 'get x', 'get y'])
  })

  it('an era aborted with a reason that is no Error rejects with "aborted"', async () => {
    const {clock, confirm} = setup({getMs: 1_000})
    void confirm('first')
    const era = new AbortController()
    const waiting = confirm('w', era.signal)
    await clock.advance(0)
    era.abort('leadership lost')
    await clock.advance(0)
    expect(waiting.outcome.error?.message).to.equal('aborted')
  })
})
