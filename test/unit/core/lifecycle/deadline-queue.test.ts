import {expect} from 'chai'
import {DeadlineQueue} from '../../../../src/core/lifecycle/deadline-queue.ts'
import {FakeClock} from '../../../support/fake-clock.ts'

function setup() {
  const clock = new FakeClock()
  const batches: {at: number; keys: string[]}[] = []
  const queue = new DeadlineQueue(clock, (keys) => batches.push({at: clock.monotonic(), keys: [...keys].sort()}))
  return {clock, queue, batches, t0: clock.monotonic()}
}

describe('DeadlineQueue', () => {
  it('hands over keys in deadline order, each at its deadline', async () => {
    const {clock, queue, batches, t0} = setup()
    queue.set('c', t0 + 3000)
    queue.set('a', t0 + 1000)
    queue.set('b', t0 + 2000)
    await clock.advance(5000)
    expect(batches).to.deep.equal([
      {at: t0 + 1000, keys: ['a']},
      {at: t0 + 2000, keys: ['b']},
      {at: t0 + 3000, keys: ['c']},
    ])
    expect(queue.size).to.equal(0)
  })

  it('arms a single clock timer however many deadlines it holds', () => {
    const {clock, queue, t0} = setup()
    for (let i = 0; i < 1000; i++) queue.set(`p${i}`, t0 + 50_000 + i)
    expect(clock.pending).to.equal(1)
    expect(queue.armedAt).to.equal(t0 + 50_000)
  })

  it('re-arms for an earlier deadline and drops the timer when the queue empties', () => {
    const {clock, queue, t0} = setup()
    queue.set('a', t0 + 5000)
    queue.set('b', t0 + 1000)
    expect(clock.pending).to.equal(1)
    expect(clock.nextTimerAt()).to.equal(t0 + 1000)
    queue.delete('a')
    queue.delete('b')
    expect(clock.pending).to.equal(0)
    expect(queue.armedAt).to.be.undefined
  })

  it('follows a deadline that moves later, firing only when it is due', async () => {
    const {clock, queue, batches, t0} = setup()
    queue.set('a', t0 + 1000)
    queue.set('a', t0 + 4000)
    await clock.advance(3999)
    expect(batches).to.deep.equal([])
    expect(clock.pending).to.equal(1)
    await clock.advance(1)
    expect(batches).to.deep.equal([{at: t0 + 4000, keys: ['a']}])
  })

  it('hands over every key due at the same time in one batch', async () => {
    const {clock, queue, batches, t0} = setup()
    for (const key of ['x', 'y', 'z']) queue.set(key, t0 + 1000)
    queue.set('later', t0 + 2000)
    await clock.advance(1000)
    expect(batches).to.deep.equal([{at: t0 + 1000, keys: ['x', 'y', 'z']}])
    expect(queue.has('later')).to.be.true
    expect(clock.pending).to.equal(1)
  })

  it('a deadline moved later leaves the armed timer where it was: it fires early, finds nothing due, and re-arms', async () => {
    const {clock, queue, batches, t0} = setup()
    queue.set('a', t0 + 1000)
    queue.set('a', t0 + 4000)
    expect(queue.armedAt).to.equal(t0 + 1000)
    await clock.advance(1000)
    expect(batches).to.deep.equal([])
    expect(queue.armedAt).to.equal(t0 + 4000)
  })

  it('suspended, it keeps every deadline and fires none, however far the clock moves; resumed, it hands over what fell due', async () => {
    const {clock, queue, batches, t0} = setup()
    queue.set('a', t0 + 1000)
    queue.suspend()
    expect(clock.pending).to.equal(0)
    await clock.advance(5000)
    expect(batches).to.deep.equal([])
    expect(queue.get('a')).to.equal(t0 + 1000)
    queue.resume()
    await clock.advance(0)
    expect(batches).to.deep.equal([{at: t0 + 5000, keys: ['a']}])
  })

  it('clear() drops every deadline and the timer', async () => {
    const {clock, queue, batches, t0} = setup()
    queue.set('a', t0 + 1000)
    queue.set('b', t0 + 2000)
    queue.clear()
    expect(queue.size).to.equal(0)
    expect(queue.has('a')).to.be.false
    expect(clock.pending).to.equal(0)
    queue.set('c', t0 + 3000)
    await clock.advance(5000)
    expect(batches).to.deep.equal([{at: t0 + 3000, keys: ['c']}])
  })

  describe('a deadline moved later is moved in the heap only when it comes up', () => {
    it('a later deadline is written down: the heap keeps the earlier one until it comes up', async () => {
      const {clock, queue, batches, t0} = setup()
      queue.set('a', t0 + 1000)
      queue.set('a', t0 + 5000)
      expect(queue.get('a')).to.equal(t0 + 5000)
      expect(queue['heap'].get('a'), 'not moved in the heap').to.equal(t0 + 1000)
      await clock.advance(1000)
      expect(queue['heap'].get('a'), 'moved when it came up').to.equal(t0 + 5000)
      expect(batches).to.deep.equal([])
    })

    const moves: {name: string; sets: number[]}[] = [
      {name: 'moved later and then earlier than it first was', sets: [2000, 5000, 1000]},
      {name: 'moved later twice and back between (not at the first or the highest)', sets: [1000, 5000, 3000]},
    ]
    for (const {name, sets} of moves) {
      it(`${name}: handed over at the last one set`, async () => {
        const {clock, queue, batches, t0} = setup()
        for (const at of sets) queue.set('a', t0 + at)
        const last = t0 + sets.at(-1)!
        expect(queue.get('a')).to.equal(last)
        await clock.advance(6000)
        expect(batches).to.deep.equal([{at: last, keys: ['a']}])
      })
    }

    it('moved later, then deleted: never handed over, and no timer left', async () => {
      const {clock, queue, batches, t0} = setup()
      queue.set('a', t0 + 1000)
      queue.set('a', t0 + 5000)
      expect(queue.delete('a')).to.equal(true)
      expect(queue.get('a')).to.equal(undefined)
      await clock.advance(6000)
      expect(batches).to.deep.equal([])
      expect(clock.pending).to.equal(0)
    })

    it('moved later, then cleared, then set again: handed over at the new deadline only', async () => {
      const {clock, queue, batches, t0} = setup()
      queue.set('a', t0 + 1000)
      queue.set('a', t0 + 5000)
      queue.clear()
      expect(queue.get('a'), 'nothing kept of it').to.equal(undefined)
      queue.set('a', t0 + 2000)
      await clock.advance(6000)
      expect(batches).to.deep.equal([{at: t0 + 2000, keys: ['a']}])
    })

    it('agrees with a plain map of deadlines over 5,000 random steps: every key handed over once, at its deadline', async () => {
      const {clock, queue, batches} = setup()
      // A small LCG: the same steps every run.
      let seed = 12345
      const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
      const model = new Map<string, number>()
      const handed: {at: number; keys: string[]}[] = []
      for (let step = 0; step < 5000; step++) {
        const key = `k${Math.floor(random() * 50)}`
        const roll = random()
        const now = clock.monotonic()
        if (roll < 0.6) {
          const at = now + Math.floor(random() * 3000)
          queue.set(key, at)
          model.set(key, at)
        } else if (roll < 0.7) {
          expect(queue.delete(key)).to.equal(model.delete(key))
        } else {
          const until = now + Math.floor(random() * 500)
          // The model's keys due up to `until`, grouped by deadline: what the queue must hand over.
          const due = [...model].filter(([, at]) => at <= until).sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))
          for (const [k, at] of due) {
            const last = handed.at(-1)
            const when = Math.max(at, now)
            if (last?.at === when) last.keys.push(k)
            else handed.push({at: when, keys: [k]})
            model.delete(k)
          }
          await clock.advance(until - now)
        }
        expect(queue.get(key)).to.equal(model.get(key))
      }
      expect(batches.length).to.be.greaterThan(100)
      expect(batches).to.deep.equal(handed.map((b) => ({at: b.at, keys: [...b.keys].sort()})))
      expect(queue.size).to.equal(model.size)
    })
  })
})
