import {expect} from 'chai'
import {KeyedMinHeap} from '../../../../src/core/lifecycle/keyed-min-heap.ts'
import {seededRandom} from '../../../support/seeded-random.ts'

function drain(heap: KeyedMinHeap<string>): string[] {
  const out: string[] = []
  for (let key = heap.pop(); key !== undefined; key = heap.pop()) out.push(key)
  return out
}

describe('KeyedMinHeap', () => {
  it('pops keys in priority order', () => {
    const heap = new KeyedMinHeap<string>()
    // A fixed shuffle of 0..99, so that the test is the same on every run.
    const priorities = Array.from({length: 100}, (_, i) => (i * 37) % 100)
    for (const p of priorities) heap.set(`k${p}`, p)
    expect(heap.size).to.equal(100)
    expect(heap.peekKey()).to.equal('k0')
    expect(drain(heap)).to.deep.equal(Array.from({length: 100}, (_, i) => `k${i}`))
  })

  it('moves a key up or down when its priority is updated, keeping one entry per key', () => {
    const heap = new KeyedMinHeap<string>()
    for (const [k, p] of [['a', 10], ['b', 20], ['c', 30], ['d', 40]] as const) heap.set(k, p)
    heap.set('d', 5)
    heap.set('a', 35)
    expect(heap.size).to.equal(4)
    expect(heap.get('a')).to.equal(35)
    expect(drain(heap)).to.deep.equal(['d', 'b', 'c', 'a'])
  })

  it('removes a key from the middle, the top and the end', () => {
    const heap = new KeyedMinHeap<string>()
    for (let i = 0; i < 10; i++) heap.set(`k${i}`, i)
    expect(heap.delete('k5')).to.be.true
    expect(heap.delete('k0')).to.be.true
    expect(heap.delete('k9')).to.be.true
    expect(heap.delete('k9')).to.be.false
    expect(heap.has('k5')).to.be.false
    expect(heap.get('k5')).to.be.undefined
    expect(drain(heap)).to.deep.equal(['k1', 'k2', 'k3', 'k4', 'k6', 'k7', 'k8'])
  })

  it('keeps the heap order under a long mix of sets, deletes and pops, checked after every step', () => {
    const heap = new KeyedMinHeap<number>()
    const model = new Map<number, number>()
    const random = seededRandom(0x9e3779b9)
    const below = (n: number) => Math.floor(random() * n)
    const counts = {set: 0, delete: 0, pop: 0}
    for (let step = 0; step < 20_000; step++) {
      const op = below(10)
      if (op < 5) {
        // Few distinct priorities, so that ties and moves both up and down are common.
        const key = below(300)
        const priority = below(500)
        heap.set(key, priority)
        model.set(key, priority)
        counts.set++
      } else if (op < 8) {
        const key = below(300)
        expect(heap.delete(key)).to.equal(model.delete(key))
        counts.delete++
      } else {
        const key = heap.pop()
        if (model.size === 0) expect(key).to.equal(undefined)
        else {
          expect(model.get(key as number), `popped ${key} at step ${step}`).to.equal(Math.min(...model.values()))
          model.delete(key as number)
        }
        counts.pop++
      }
      expectHeapInvariant(heap, model, step)
    }
    // The generator reaches every operation often, with the heap both full and nearly empty.
    expect(Math.min(counts.set, counts.delete, counts.pop)).to.be.above(3_000)
    const popped: number[] = []
    for (let key = heap.pop(); key !== undefined; key = heap.pop()) popped.push(model.get(key) as number)
    expect(popped).to.deep.equal([...model.values()].sort((a, b) => a - b))
  })
})

/**
 * The heap's structure, read through its private fields (TypeScript's bracket access): every parent's
 * priority at most its children's, the slot index pointing at each key's slot, and the same keys and
 * priorities as the model. Plain loops and one expect: thousands of chai calls per step are too slow.
 */
function expectHeapInvariant(heap: KeyedMinHeap<number>, model: Map<number, number>, step: number): void {
  expect(heapViolation(heap['keys'], heap['priorities'], heap['slots'], model), `after step ${step}`).to.equal(undefined)
}

function heapViolation(keys: number[], priorities: number[], slots: Map<number, number>, model: Map<number, number>): string | undefined {
  if (keys.length !== model.size || priorities.length !== model.size || slots.size !== model.size) {
    return `sizes: ${keys.length} keys, ${priorities.length} priorities, ${slots.size} slots, ${model.size} in the model`
  }
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as number
    if (slots.get(key) !== i) return `key ${key} is in slot ${i} but indexed at ${slots.get(key)}`
    if (priorities[i] !== model.get(key)) return `key ${key} has priority ${priorities[i]}, the model ${model.get(key)}`
    const parent = (i - 1) >> 1
    if (i > 0 && (priorities[parent] as number) > (priorities[i] as number)) return `slot ${i} (${priorities[i]}) is below its parent ${parent} (${priorities[parent]})`
  }
  return undefined
}
