/**
 * Event names: client-go's `<object>.<UnixNano in hex>`, distinct for a burst of Events within one
 * millisecond (the oversized-Lease report names 24 at once: a random part alone collided, and the API
 * refused the second Event of the pair).
 */
import {expect} from 'chai'
import {eventName} from '../../../../src/kube/stores/event-recorder.ts'

const WALL = Date.parse('2026-12-06T06:31:40.090Z')

describe('Event names', () => {
  it('are the object name and the wall time in nanoseconds, hex, as client-go names them', () => {
    const name = eventName('machinepools.compute.ironcore.dev', WALL, 0, 0)
    const [object, hex] = [name.slice(0, name.lastIndexOf('.')), name.slice(name.lastIndexOf('.') + 1)]
    expect(object).to.equal('machinepools.compute.ironcore.dev')
    expect(hex).to.match(/^[0-9a-f]+$/)
    expect(BigInt(`0x${hex}`) / 1_000_000n).to.equal(BigInt(WALL))
  })

  it('are distinct for 1,000 Events of one object in one millisecond, whatever the random part draws', () => {
    const names = Array.from({length: 1_000}, (_, i) => eventName('pool-a', WALL, i, 0.5))
    expect(new Set(names).size).to.equal(1_000)
  })

  it('stay within the millisecond: the sub-millisecond digits never carry into the next one', () => {
    const last = eventName('p', WALL, 999, 0.999999)
    const next = eventName('p', WALL + 1, 0, 0)
    const nanos = (name: string) => BigInt(`0x${name.slice(2)}`)
    expect(nanos(last) / 1_000_000n).to.equal(BigInt(WALL))
    expect(nanos(last) < nanos(next)).to.equal(true)
  })

  it('differ between two recorders at the same sequence when their random parts differ', () => {
    expect(eventName('p', WALL, 3, 0.1)).to.not.equal(eventName('p', WALL, 3, 0.2))
  })
})
