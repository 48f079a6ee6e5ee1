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

  it('pairs each mark with the nearest would-mark within the window, not merely one within it; at the window\'s edge still pairs', () => {
    // The nearer would-mark listed first, the farther one (still within the window) after it.
    const nearestFirst = agreement([s('a', 1_000)], [s('a', 900), s('a', 1_500)], 1_000)
    expect(nearestFirst.agreed.map((p) => p.wouldMarkAt)).to.deep.equal([900])
    expect(nearestFirst.onlyWouldMark).to.deep.equal([s('a', 1_500)])
    // The nearer one listed last.
    const nearestLast = agreement([s('a', 1_000)], [s('a', 1_800), s('a', 1_100)], 1_000)
    expect(nearestLast.agreed.map((p) => p.wouldMarkAt)).to.deep.equal([1_100])
    expect(agreement([s('a', 0)], [s('a', 1_000)], 1_000).agreed.map((p) => p.deltaMs), 'exactly windowMs apart').to.deep.equal([1_000])
  })

  it('pairs the marks of a pool in time order, whatever order they are given in: the earlier mark takes the would-mark near both', () => {
    const result = agreement([s('a', 1_500), s('a', 0)], [s('a', 800)], 1_000)
    expect(result.agreed).to.deep.equal([{kind: 'machine', pool: 'a', markedAt: 0, wouldMarkAt: 800, deltaMs: 800}])
    expect(result.onlyMarked).to.deep.equal([s('a', 1_500)])
  })

  it('since leaves out marks and would-marks before it on both sides, and keeps those at it', () => {
    const result = agreement([s('a', 0), s('b', 5)], [s('c', 4), s('b', 5), s('d', 5)], 1_000, 5)
    expect(result.agreed.map((p) => p.pool)).to.deep.equal(['b'])
    expect(result.onlyMarked, 'a mark before since').to.deep.equal([])
    expect(result.onlyWouldMark, 'a would-mark before since').to.deep.equal([s('d', 5)])
  })

  it('a sighting without a UID pairs with one whose UID is empty: both name no UID', () => {
    const result = agreement([{kind: 'machine', pool: 'a', at: 0}], [{kind: 'machine', pool: 'a', uid: '', at: 10}], 1_000)
    expect(result.agreed.map((p) => p.pool)).to.deep.equal(['a'])
  })
})
