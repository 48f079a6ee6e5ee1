import {expect} from 'chai'
import {KeyedMinHeap} from '../../../../src/core/keyed-min-heap.ts'

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

  it('keeps the heap order under a long mix of sets and deletes', () => {
    const heap = new KeyedMinHeap<number>()
    const model = new Map<number, number>()
    let seed = 7
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
    for (let i = 0; i < 5000; i++) {
      const key = next() % 200
      if (next() % 3 === 0) {
        expect(heap.delete(key)).to.equal(model.delete(key))
      } else {
        const p = next() % 1000
        heap.set(key, p)
        model.set(key, p)
      }
    }
    expect(heap.size).to.equal(model.size)
    const popped: number[] = []
    for (let key = heap.pop(); key !== undefined; key = heap.pop()) popped.push(model.get(key) as number)
    expect(popped).to.deep.equal([...model.values()].sort((a, b) => a - b))
  })
})
