/** Confirming reads: one GET per pool when few wait, one LIST for all when many wait behind a turn. */
import {expect} from 'chai'
import {BATCH_CONFIRM_MIN, ConfirmBatcher, SharedFailure} from '../../../../src/core/lifecycle/confirm-batcher.ts'
import {RequestLimiter} from '../../../../src/core/lifecycle/request-limiter.ts'
import type {Lease} from '../../../../src/core/types.ts'
import {FakeClock} from '../../../support/fake-clock.ts'

const lease = (name: string, renewTime: string): Lease => ({name, namespace: 'ns', spec: {renewTime}})

function setup(options: {concurrency?: number; listFails?: boolean; listPages?: number} = {}) {
  const clock = new FakeClock()
  const limiter = new RequestLimiter(clock, {qps: 1000, burst: 1000, concurrency: options.concurrency ?? 1})
  const api = new Map<string, Lease>()
  const requests: string[] = []
  /** The names each LIST was asked about, in order. */
  const listedFor: string[][] = []
  const answerIn = 100
  const later = <T>(fn: () => T) => new Promise<T>((resolve, reject) => clock.setTimer(answerIn, () => {
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
      return later(() => api.get(name))
    },
    list: () => (_signal, names) => {
      requests.push('list')
      listedFor.push([...names].sort())
      return later(() => {
        if (options.listFails === true) throw new Error('HTTP 500')
        return [...api.values()]
      })
    },
    timeoutMs: 5_000,
    timeoutError: (what) => new Error(`${what}: no answer`),
    listPages: () => options.listPages ?? 1,
  })
  return {clock, limiter, api, requests, listedFor, batcher}
}

describe('ConfirmBatcher', () => {
  it('confirms each of a few pools with its own GET', async () => {
    const {clock, api, requests, batcher} = setup({concurrency: 4})
    api.set('a', lease('a', 't1'))
    const era = new AbortController().signal
    const answers = Promise.all(['a', 'b', 'c'].map((n) => batcher.confirm(n, era)))
    await clock.advance(1_000)
    expect((await answers).map((l) => l?.spec.renewTime)).to.deep.equal(['t1', undefined, undefined])
    expect(requests).to.deep.equal(['get a', 'get b', 'get c'])
    expect(batcher.lists).to.equal(0)
  })

  it(`answers everyone waiting with one LIST once more than ${BATCH_CONFIRM_MIN} wait behind a turn, gives back their places, and shows what the API holds when the LIST goes out`, async () => {
    const {clock, limiter, api, requests, listedFor, batcher} = setup()
    const names = Array.from({length: 40}, (_, i) => `p${i}`)
    for (const n of names) api.set(n, lease(n, 'old'))
    const era = new AbortController().signal
    const answers = Promise.all(names.map((n) => batcher.confirm(n, era)))
    // The first turn is a GET of its own (nobody waited yet when it was asked).
    await clock.advance(0)
    // A renewal lands while that GET is out, before the LIST goes: the LIST shows it.
    api.set('p7', lease('p7', 'new'))
    await clock.advance(1_000)
    const leases = await answers
    expect(requests).to.deep.equal(['get p0', 'list'])
    expect(leases.map((l) => l?.name)).to.deep.equal(names)
    expect(leases[7]?.spec.renewTime).to.equal('new')
    // The LIST is told whom it answers (every waiting pool but p0, which had its GET), so that it may keep only those.
    expect(listedFor).to.deep.equal([names.slice(1).sort()])
    expect(limiter.queued, 'places given back').to.equal(0)
    expect(limiter.inFlight).to.equal(0)
  })

  it('lists only when more wait than the LIST has pages (a namespace of 100k Leases is 200 pages: 40 waiting confirm with GETs)', async () => {
    const {clock, requests, batcher} = setup({concurrency: 1, listPages: 200})
    const era = new AbortController().signal
    const answers = Promise.all(Array.from({length: 40}, (_, i) => batcher.confirm(`p${i}`, era)))
    // One at a time: 39 wait behind the first, fewer than the LIST's 200 pages.
    await clock.advance(10_000)
    await answers
    expect(requests.filter((r) => r === 'list')).to.deep.equal([])
    expect(requests).to.have.length(40)
  })

  it('a LIST that fails fails each confirmation it answered, as the failure of one request: the others are SharedFailure', async () => {
    const {clock, api, batcher} = setup({listFails: true})
    const names = Array.from({length: 30}, (_, i) => `p${i}`)
    for (const n of names) api.set(n, lease(n, 'old'))
    const era = new AbortController().signal
    const outcomes = Promise.allSettled(names.map((n) => batcher.confirm(n, era)))
    await clock.advance(1_000)
    const settled = await outcomes
    expect(settled[0]?.status, 'the first GET').to.equal('fulfilled')
    const failed = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected')
    expect(failed).to.have.length(29)
    expect(failed.filter((f) => !(f.reason instanceof SharedFailure)), 'one is the request\'s own failure').to.have.length(1)
    expect(failed.every((f) => (f.reason as Error).message.includes('HTTP 500'))).to.be.true
  })

  it('rejects at once when the era ends (leadership lost), and sends nothing for it after', async () => {
    const {clock, requests, batcher} = setup()
    const era = new AbortController()
    const outcomes = Promise.allSettled(['a', 'b'].map((n) => batcher.confirm(n, era.signal)))
    await clock.advance(0)
    era.abort(new Error('leadership lost'))
    await clock.advance(1_000)
    expect((await outcomes).map((o) => o.status)).to.deep.equal(['rejected', 'rejected'])
    expect(requests).to.deep.equal(['get a'])
  })
})
