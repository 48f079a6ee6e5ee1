import {expect} from 'chai'
import {FairQueue} from '../../../src/core/fair-queue.ts'

/** A run() whose calls wait until the test releases them, recording the order they started in. */
function gated() {
  const started: string[] = []
  const gates = new Map<string, () => void>()
  return {
    started,
    run: (item: string) =>
      new Promise<void>((resolve) => {
        started.push(item)
        gates.set(item, resolve)
      }),
    release(item: string) {
      gates.get(item)?.()
    },
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

describe('FairQueue', () => {
  it("serves keys round-robin: one key's flood delays another key's item by one item per worker", async () => {
    const g = gated()
    const q = new FairQueue({concurrency: 2, perKey: 1, run: g.run, onError: () => {}})
    for (let i = 0; i < 100; i++) q.add('flooder', `f${i}`)
    q.add('other', 'legit')
    await tick()
    // flooder holds one worker (perKey 1); the other worker takes the other key's item at once.
    expect(g.started).to.deep.equal(['f0', 'legit'])
    g.release('f0')
    await tick()
    expect(g.started).to.deep.equal(['f0', 'legit', 'f1'])
  })

  it('bounds work per key and in all', async () => {
    const g = gated()
    const q = new FairQueue({concurrency: 3, perKey: 2, run: g.run, onError: () => {}})
    for (const item of ['a1', 'a2', 'a3', 'b1', 'b2', 'c1']) q.add(item[0] ?? '', item)
    await tick()
    // a has two in flight (perKey), b one: three in all (concurrency).
    expect(g.started).to.deep.equal(['a1', 'a2', 'b1'])
    g.release('a1')
    await tick()
    expect(g.started.at(-1)).to.equal('a3')
    g.release('a2')
    await tick()
    // a's turn has passed: b's next item before c's first.
    expect(g.started.at(-1)).to.equal('b2')
    g.release('a3')
    await tick()
    expect(g.started).to.deep.equal(['a1', 'a2', 'b1', 'a3', 'b2', 'c1'])
  })

  it('runs an item queued twice once, and once more when it was added while running', async () => {
    const g = gated()
    const q = new FairQueue({concurrency: 1, perKey: 1, run: g.run, onError: () => {}})
    q.add('k', 'x')
    await tick()
    q.add('k', 'x')
    q.add('k', 'y')
    q.add('k', 'y')
    g.release('x')
    await tick()
    expect(g.started).to.deep.equal(['x', 'y'])
    g.release('y')
    await tick()
    expect(g.started).to.deep.equal(['x', 'y', 'x'])
    g.release('x')
    await q.idle()
    expect(q.size).to.equal(0)
  })

  it('reports a failed item and goes on', async () => {
    const errors: string[] = []
    const done: string[] = []
    const q = new FairQueue({
      concurrency: 1,
      perKey: 1,
      run: (item) => {
        if (item === 'bad') return Promise.reject(new Error('boom'))
        done.push(item)
        return Promise.resolve()
      },
      onError: (item, error) => errors.push(`${item}: ${(error as Error).message}`),
    })
    q.add('k', 'bad')
    q.add('k', 'good')
    await q.idle()
    expect(errors).to.deep.equal(['bad: boom'])
    expect(done).to.deep.equal(['good'])
  })
})
