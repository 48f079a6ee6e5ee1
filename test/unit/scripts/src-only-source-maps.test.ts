import {expect} from 'chai'
import {filterSourceMap} from '../../../scripts/src-only-source-maps.ts'

// Segments are [generated column, source, source line, source column] in base64 VLQ, each relative to
// the previous one (the generated column within its line only): A=0, C=1, D=-1, E=2, G=3, I=4, M=6.
const own = (source: string) => !source.includes('node_modules')

describe('source maps of ironpool code only', () => {
  it('keeps the segments of own sources, re-indexed, and ends a kept mapping where a dependency starts', () => {
    // Line 0: col 0 → src/a.ts 1:0, col 6 → node_modules/x.js 0:0. Line 1: col 2 → src/b.ts 3:4.
    const map = {version: 3 as const, sources: ['../../src/a.ts', '../../node_modules/x.js', '../../src/b.ts'], names: [], mappings: 'AACA,MCDA;ECGI'}
    const filtered = filterSourceMap(map, own)
    expect(filtered?.sources).to.deep.equal(['../../src/a.ts', '../../src/b.ts'])
    // Line 0: col 0 → source 0 line 1 col 0, then a bare end at col 6. Line 1: col 2 → source 1 (+1) line 3 (+2) col 4 (+4).
    expect(filtered?.mappings).to.equal('AACA,M;ECEI')
  })

  it('leaves nothing when every source is a dependency', () => {
    expect(filterSourceMap({version: 3, sources: ['../../node_modules/x.js'], names: [], mappings: 'AAAA'}, own)).to.equal(undefined)
  })
})
