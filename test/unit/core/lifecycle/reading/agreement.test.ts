/** The dry run's agreement with the controller in charge: pairs per pool within the window, and the ones only one made. */
import {expect} from 'chai'
import {agreement} from '../../../../../src/core/lifecycle/reading/agreement.ts'

const s = (pool: string, at: number, uid = `uid-${pool}`) => ({kind: 'machine', pool, uid, at})

describe('dry-run agreement', () => {
  it('pairs each mark with the nearest would-mark of the same pool within the window', () => {
    const result = agreement([s('a', 1_000), s('b', 2_000)], [s('b', 2_400), s('a', 900), s('a', 50_000)], 1_000)
    expect(result.agreed).to.deep.equal([
      {kind: 'machine', pool: 'a', markedAt: 1_000, wouldMarkAt: 900, deltaMs: -100},
      {kind: 'machine', pool: 'b', markedAt: 2_000, wouldMarkAt: 2_400, deltaMs: 400},
    ])
    expect(result.onlyWouldMark).to.deep.equal([s('a', 50_000)])
    expect(result.onlyMarked).to.deep.equal([])
    expect(result.ratio).to.equal(2 / 3)
    expect(result.maxAbsDeltaMs).to.equal(400)
  })

  it('a would-mark outside the window, of another UID (the pool made anew), or of another kind does not pair', () => {
    const result = agreement([s('a', 0), s('b', 0), {kind: 'volume', pool: 'c', at: 0}], [s('a', 1_001), s('b', 0, 'other'), {kind: 'machine', pool: 'c', at: 0}], 1_000)
    expect(result.agreed).to.deep.equal([])
    expect(result.onlyMarked.map((m) => m.pool)).to.deep.equal(['a', 'b', 'c'])
    expect(result.onlyWouldMark.map((m) => m.pool)).to.deep.equal(['b', 'c', 'a'])
    expect(result.ratio).to.equal(0)
  })

  it('a pool that died twice pairs twice; sightings before since are left out; nothing to compare is full agreement', () => {
    const result = agreement([s('a', 0), s('a', 100_000)], [s('a', 100_050), s('a', 10)], 1_000)
    expect(result.agreed.map((p) => p.deltaMs)).to.deep.equal([10, 50])
    expect(agreement([s('a', 0)], [s('a', 10)], 1_000, 5).agreed).to.deep.equal([])
    expect(agreement([], [], 1_000)).to.deep.include({ratio: 1, maxAbsDeltaMs: 0})
  })
})
