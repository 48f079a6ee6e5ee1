/** One kind's view at its edges: what a source not yet heard from says, and a backdate only for a spell that begins. */
import {expect} from 'chai'
import {ViewState} from '../../../../../src/core/lifecycle/sight/view-state.ts'
import type {BlindReason} from '../../../../../src/core/lifecycle/sight/sight.ts'
import {FakeClock} from '../../../../support/fake-clock.ts'
import {FakeLogger} from '../../../../support/fake-logger.ts'

function setup() {
  const clock = new FakeClock()
  const logger = new FakeLogger()
  const blind: [BlindReason, number][] = []
  const view = new ViewState({clock, logger, sources: ['sight', 'pools'], fields: {kind: 'machine'}, observer: {blindFor: (r, ms) => blind.push([r, ms])}})
  return {clock, logger, view, blind}
}

describe('ViewState: edges', () => {
  it('a source not heard from yet is blind as not synced, "not yet reported", which the log says when it becomes the top reason', () => {
    const {logger, view} = setup()
    view.set('sight', 'api-unanswered', 'not yet probed')
    view.set('sight', undefined)
    expect(view.reason).to.equal('not-synced')
    expect(logger.entries.at(-1)).to.deep.equal({
      level: 'info',
      obj: {kind: 'machine', reason: 'not-synced', was: 'api-unanswered', source: 'sight', detail: 'not yet reported'},
      msg: 'view still not whole, now not-synced',
    })
  })

  it('a spell that goes on is not backdated: a pause seen 500 ms late within it ends the earlier reason’s time now', async () => {
    const {clock, view, blind} = setup()
    view.set('sight', undefined)
    view.set('pools', undefined)
    view.set('pools', 'watch-gap', 'watch closed')
    await clock.advance(1_000)
    view.set('sight', 'paused', 'the event loop ran 500 ms late', 500)
    await clock.advance(1_000)
    view.set('sight', undefined)
    view.set('pools', undefined)
    // After the start-up spell (not synced):
    expect(blind.slice(1)).to.deep.equal([
      ['watch-gap', 1_000],
      ['paused', 1_000],
      ['watch-gap', 0],
    ])
  })
})
