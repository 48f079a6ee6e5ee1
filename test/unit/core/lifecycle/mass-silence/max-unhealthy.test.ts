import {expect} from 'chai'
import {exceedsMaxUnhealthy, formatMaxUnhealthy, parseMaxUnhealthy, UnhealthyBreaker} from '../../../../../src/core/lifecycle/mass-silence/max-unhealthy.ts'

describe('--max-unhealthy', () => {
  it('parses a count and a percentage', () => {
    expect(parseMaxUnhealthy('10')).to.deep.equal({kind: 'count', count: 10})
    expect(parseMaxUnhealthy('0')).to.deep.equal({kind: 'count', count: 0})
    expect(parseMaxUnhealthy('30%')).to.deep.equal({kind: 'percent', percent: 30})
    expect(parseMaxUnhealthy('12.5%')).to.deep.equal({kind: 'percent', percent: 12.5})
    expect(parseMaxUnhealthy('100%')).to.deep.equal({kind: 'percent', percent: 100})
  })

  for (const [input, rule] of [
    ['-1', 'negative'],
    ['-5%', 'negative'],
    ['101%', 'more than 100%'],
    ['ten', 'got "ten"'],
    ['', 'got ""'],
    ['1.5', 'got "1.5"'],
    ['10 %', 'got "10 %"'],
  ] as const) {
    it(`rejects ${JSON.stringify(input)}, naming the flag and the rule`, () => {
      expect(() => parseMaxUnhealthy(input)).to.throw(Error, /^--max-unhealthy must be a whole number of pools .* or a percentage from 0% to 100%/)
      expect(() => parseMaxUnhealthy(input)).to.throw(rule)
    })
  }

  it('trips on more than the count, or more than the share, and never when off', () => {
    expect(exceedsMaxUnhealthy({kind: 'count', count: 2}, 2, 10)).to.be.false
    expect(exceedsMaxUnhealthy({kind: 'count', count: 2}, 3, 10)).to.be.true
    expect(exceedsMaxUnhealthy({kind: 'percent', percent: 30}, 3, 10)).to.be.false
    expect(exceedsMaxUnhealthy({kind: 'percent', percent: 30}, 4, 10)).to.be.true
    expect(exceedsMaxUnhealthy({kind: 'percent', percent: 100}, 10, 10)).to.be.false
    expect(exceedsMaxUnhealthy(undefined, 10, 10)).to.be.false
  })

  it('reports a trip and a recovery once each', () => {
    const breaker = new UnhealthyBreaker({kind: 'count', count: 1})
    expect([1, 2, 3, 2, 1, 0, 2].map((n) => breaker.update(n, n, 10))).to.deep.equal([
      undefined,
      'tripped',
      undefined,
      undefined,
      'recovered',
      undefined,
      'tripped',
    ])
    expect(breaker.tripped).to.be.true
  })

  it('trims the text, refuses a count too large to count exactly, and writes a limit back as it is typed', () => {
    expect(parseMaxUnhealthy(' 10 ')).to.deep.equal({kind: 'count', count: 10})
    expect(parseMaxUnhealthy('12.25%')).to.deep.equal({kind: 'percent', percent: 12.25})
    expect(() => parseMaxUnhealthy('10%x')).to.throw('got "10%x"')
    expect(() => parseMaxUnhealthy('1-2')).to.throw('got "1-2"')
    expect(() => parseMaxUnhealthy('99999999999999999999')).to.throw('--max-unhealthy must be a whole number of pools (e.g. 10) or a percentage from 0% to 100% (e.g. 30%); "99999999999999999999" is too large')
    expect(() => parseMaxUnhealthy('x', '--zone-max-unhealthy')).to.throw(/^--zone-max-unhealthy must be/)
    expect([formatMaxUnhealthy({kind: 'count', count: 3}), formatMaxUnhealthy({kind: 'percent', percent: 12.5})]).to.deep.equal(['3', '12.5%'])
  })

  it('trips on the pools gone silent within the window; once open, the stale pools not marked keep it open', () => {
    const breaker = new UnhealthyBreaker({kind: 'count', count: 1})
    expect(breaker.update(1, 5, 10), 'held pools alone do not trip it').to.equal(undefined)
    expect([breaker.unhealthy, breaker.total]).to.deep.equal([5, 10])
    expect(breaker.update(2, 2, 10)).to.equal('tripped')
    expect(breaker.update(0, 2, 10), 'still two stale: open').to.equal(undefined)
    expect(breaker.tripped).to.equal(true)
    expect(breaker.update(0, 1, 10)).to.equal('recovered')
    expect([breaker.unhealthy, breaker.total]).to.deep.equal([1, 10])
  })
})
