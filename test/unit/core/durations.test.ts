import {expect} from 'chai'
import {DurationSyntaxError, formatDuration, parseDuration} from '../../../src/core/durations.ts'

describe('durations', () => {
  describe('parseDuration', () => {
    for (const [text, ms] of [
      ['10s', 10_000],
      ['1m30s', 90_000],
      ['500ms', 500],
      ['1h', 3_600_000],
      ['1.5s', 1_500],
      ['1.1s', 1_100],
      ['.5s', 500],
      ['1h2m3s4ms', 3_723_004],
      ['1.5h', 5_400_000],
      ['250us', 0.25],
      ['250µs', 0.25],
      ['1000000ns', 1],
      ['0', 0],
      ['0s', 0],
      ['+5s', 5_000],
    ] as const) {
      it(`reads ${JSON.stringify(text)} as ${ms} ms`, () => {
        expect(parseDuration(text)).to.equal(ms)
      })
    }

    for (const [text, why] of [
      ['10', 'missing unit'],
      ['-1s', 'negative'],
      ['abc', 'invalid number'],
      ['', 'empty'],
      ['1x', 'unknown unit "x"'],
      ['1s ', 'unknown unit "s "'],
      ['.s', 'invalid number'],
      ['+', 'invalid number'],
      ['1..5s', 'missing unit'],
    ] as const) {
      it(`refuses ${JSON.stringify(text)} (${why})`, () => {
        expect(() => parseDuration(text))
          .to.throw(DurationSyntaxError, why)
          .with.property('message')
          .that.contains(JSON.stringify(text))
      })
    }
  })

  describe('formatDuration', () => {
    for (const [ms, text] of [
      [10_000, '10s'],
      [90_000, '1m30s'],
      [500, '500ms'],
      [3_600_000, '1h'],
      [5_400_000, '1h30m'],
      [3_723_004, '1h2m3.004s'],
      [1_500, '1.5s'],
      [0, '0s'],
      [1.5, '1.5ms'],
      [0.25, '250µs'],
      [-10_000, '-10s'],
    ] as const) {
      it(`writes ${ms} ms as ${text}`, () => {
        expect(formatDuration(ms)).to.equal(text)
      })
    }

    it('round-trips through parseDuration', () => {
      for (const ms of [1, 999, 1_000, 1_001, 59_999, 60_000, 3_599_999, 86_400_000, 0.001]) {
        expect(parseDuration(formatDuration(ms)), formatDuration(ms)).to.equal(ms)
      }
    })
  })
})
