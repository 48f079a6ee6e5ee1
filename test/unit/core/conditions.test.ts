import {expect} from 'chai'
import {conditionDiffers, findCondition, formatMicroTime, setCondition, type DesiredCondition} from '../../../src/core/conditions.ts'
import type {PoolCondition} from '../../../src/core/types.ts'

const T0 = new Date('2026-01-01T00:00:00Z')
const T1 = new Date('2026-01-01T00:00:10Z')

const ready = (over: Partial<PoolCondition> = {}): PoolCondition => ({
  type: 'Ready',
  status: 'True',
  reason: 'HeartbeatReceived',
  message: 'machine runtime status probe succeeded',
  observedGeneration: 3,
  lastUpdateTime: '2025-12-31T00:00:00Z',
  lastTransitionTime: '2025-12-30T00:00:00Z',
  ...over,
})
const desiredTrue: DesiredCondition = {
  type: 'Ready',
  status: 'True',
  reason: 'HeartbeatReceived',
  message: 'machine runtime status probe succeeded',
  observedGeneration: 3,
}
const other: PoolCondition = {type: 'Scheduled', status: 'True', reason: 'Fine', message: 'ok'}

describe('conditions', () => {
  describe('findCondition', () => {
    it('returns the first condition of the type', () => {
      const first = ready({message: 'first'})
      expect(findCondition([other, first, ready({message: 'second'})], 'Ready')).to.equal(first)
    })

    it('returns undefined when there is none', () => {
      expect(findCondition([other], 'Ready')).to.be.undefined
      expect(findCondition(undefined, 'Ready')).to.be.undefined
    })
  })

  describe('conditionDiffers', () => {
    it('ignores timestamps', () => {
      expect(conditionDiffers(ready({lastUpdateTime: 'x', lastTransitionTime: 'y'}), desiredTrue)).to.be.false
    })

    for (const [field, change] of [
      ['status', {status: 'False'}],
      ['reason', {reason: 'Other'}],
      ['message', {message: 'other'}],
      ['observedGeneration', {observedGeneration: 4}],
    ] as const) {
      it(`compares ${field}`, () => {
        expect(conditionDiffers(ready(), {...desiredTrue, ...change})).to.be.true
      })
    }

    it('treats an absent observedGeneration as 0', () => {
      expect(conditionDiffers(ready({observedGeneration: undefined}), {...desiredTrue, observedGeneration: 0})).to.be.false
    })

    it('a missing condition differs', () => {
      expect(conditionDiffers(undefined, desiredTrue)).to.be.true
    })
  })

  describe('setCondition', () => {
    it('moves lastUpdateTime on every set, even when nothing else changed', () => {
      const [next] = setCondition([ready()], desiredTrue, T1)
      expect(next?.lastUpdateTime).to.equal('2026-01-01T00:00:10Z')
    })

    it('keeps lastTransitionTime when the status stays', () => {
      const [next] = setCondition([ready()], {...desiredTrue, message: 'changed'}, T1)
      expect(next?.lastTransitionTime).to.equal('2025-12-30T00:00:00Z')
    })

    it('moves lastTransitionTime when the status changes', () => {
      const [next] = setCondition([ready()], {...desiredTrue, status: 'False'}, T1)
      expect(next?.lastTransitionTime).to.equal('2026-01-01T00:00:10Z')
    })

    it('sets both times on a new condition', () => {
      const [next] = setCondition([], desiredTrue, T0)
      expect(next).to.deep.equal({...desiredTrue, lastUpdateTime: '2026-01-01T00:00:00Z', lastTransitionTime: '2026-01-01T00:00:00Z'})
    })

    it('keeps other conditions in place and replaces the first of the type in its position', () => {
      const after: PoolCondition = {type: 'Zeta', status: 'False', reason: 'R', message: 'm'}
      const list = setCondition([other, ready(), after], {...desiredTrue, status: 'False'}, T1)
      expect(list.map((c) => c.type)).to.deep.equal(['Scheduled', 'Ready', 'Zeta'])
      expect(list[0]).to.deep.equal(other)
      expect(list[2]).to.deep.equal(after)
      expect(list[1]?.status).to.equal('False')
    })

    it('does not mutate the list it was given', () => {
      const list = [ready()]
      setCondition(list, {...desiredTrue, status: 'False'}, T1)
      expect(list[0]).to.deep.equal(ready())
    })

    it('writes the fields in IronCore JSON order and omits observedGeneration 0', () => {
      const [next] = setCondition(undefined, {...desiredTrue, observedGeneration: 0}, T0)
      expect(Object.keys(next ?? {})).to.deep.equal(['type', 'status', 'reason', 'message', 'lastUpdateTime', 'lastTransitionTime'])
    })
  })

  it('formatMicroTime writes six fractional digits', () => {
    expect(formatMicroTime(new Date('2026-01-01T00:00:00.123Z'))).to.equal('2026-01-01T00:00:00.123000Z')
  })
})
