import {expect} from 'chai'
import {colourEnabled, readyPaint} from '../../../src/cli/colour.ts'

describe('colour', () => {
  it('is on only for a terminal with NO_COLOR unset or empty', () => {
    const cases: [{isTTY?: boolean}, NodeJS.ProcessEnv, boolean, string][] = [
      [{isTTY: true}, {}, true, 'a terminal'],
      [{isTTY: true}, {NO_COLOR: ''}, true, 'NO_COLOR empty counts as unset (no-color.org)'],
      [{isTTY: true}, {NO_COLOR: '1'}, false, 'NO_COLOR set'],
      [{isTTY: false}, {}, false, 'a pipe'],
      [{}, {}, false, 'a file (isTTY undefined)'],
    ]
    for (const [stream, env, expected, why] of cases) expect(colourEnabled(stream, env), why).to.equal(expected)
  })

  it('paints Ready green, red or yellow, and nothing when off or None', () => {
    expect(readyPaint('True', true)?.('True')).to.equal('\u001b[32mTrue\u001b[39m')
    expect(readyPaint('False', true)?.('False')).to.equal('\u001b[31mFalse\u001b[39m')
    expect(readyPaint('Unknown', true)?.('Unknown')).to.equal('\u001b[33mUnknown\u001b[39m')
    expect(readyPaint('True', false)).to.equal(undefined)
    expect(readyPaint('None', true)).to.equal(undefined)
  })
})
