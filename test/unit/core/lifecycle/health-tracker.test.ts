import {expect} from 'chai'
import {HealthTracker} from '../../../../src/core/lifecycle/health-tracker.ts'
import {FakeClock} from '../../../support/fake-clock.ts'

function setup() {
  const clock = new FakeClock()
  return {clock, tracker: new HealthTracker(clock), t0: clock.monotonic()}
}

describe('HealthTracker', () => {
  it('starts the grace period at first sight, seeding renewTime from the Lease already seen', async () => {
    const {clock, tracker, t0} = setup()
    await clock.advance(7000)
    expect(tracker.observePool('p', {status: 'True', observedGeneration: 1}, () => 'r1')).to.equal('new')
    expect(tracker.get('p')).to.deep.equal({uid: undefined, renewTime: 'r1', readyStatus: 'True', observedGeneration: 1, lastChange: t0 + 7000, cutOutAtChange: 0})
    await clock.advance(1000)
    expect(tracker.observeLease('p', 'r1')).to.equal('same')
    expect(tracker.get('p')?.lastChange).to.equal(t0 + 7000)
  })

  it('counts a changed renewTime as progress, and a missing one as silence', async () => {
    const {clock, tracker, t0} = setup()
    tracker.observePool('p', {status: 'True', observedGeneration: 1})
    await clock.advance(1000)
    expect(tracker.observeLease('p', 'r1')).to.equal('progress')
    await clock.advance(1000)
    expect(tracker.observeLease('p', undefined)).to.equal('same')
    expect(tracker.observeLease('p', 'r1')).to.equal('same')
    expect(tracker.get('p')?.lastChange).to.equal(t0 + 1000)
  })

  it('ignores the Lease of a pool it does not track', () => {
    const {tracker} = setup()
    expect(tracker.observeLease('ghost', 'r1')).to.equal('untracked')
    expect(tracker.size).to.equal(0)
  })

  it('never counts a change to Unknown (or to no Ready) as progress, whichever arrives first', async () => {
    const {clock, tracker, t0} = setup()
    tracker.observePool('p', {status: 'True', observedGeneration: 1})
    await clock.advance(60_000)
    // The watch event of the controller's own write, before the write's response.
    expect(tracker.observePool('p', {status: 'Unknown', observedGeneration: 2})).to.equal('same')
    tracker.recordOwnWrite('p', {status: 'Unknown', observedGeneration: 2})
    expect(tracker.observePool('p', {status: undefined, observedGeneration: 0})).to.equal('same')
    expect(tracker.get('p')?.lastChange).to.equal(t0)
    expect(tracker.observePool('p', {status: 'True', observedGeneration: 2})).to.equal('progress')
    expect(tracker.get('p')?.lastChange).to.equal(t0 + 60_000)
  })

  it('restarts every grace period at once and forgets a pool', async () => {
    const {clock, tracker, t0} = setup()
    tracker.observePool('a', {status: 'True', observedGeneration: 1})
    tracker.observePool('b', {status: 'False', observedGeneration: 1})
    await clock.advance(5000)
    tracker.restartAll()
    expect([tracker.get('a')?.lastChange, tracker.get('b')?.lastChange]).to.deep.equal([t0 + 5000, t0 + 5000])
    expect(tracker.forget('a')).to.be.true
    expect(tracker.size).to.equal(1)
    expect([...tracker.names()]).to.deep.equal(['b'])
  })

  describe('the rules a mutation run needs defended (issue 30)', () => {
    const ready = (status: 'True' | 'False' | 'Unknown', observedGeneration = 1) => ({status, observedGeneration})

    it('a new uid under a known name is a new pool; a first uid learnt, or none given, is the same pool', async () => {
      const {clock, tracker} = setup()
      expect(tracker.observePool('p', ready('True'))).to.equal('new')
      expect(tracker.observePool('p', ready('True'), undefined, 'uid-1'), 'the uid learnt').to.equal('same')
      expect(tracker.get('p')?.uid).to.equal('uid-1')
      expect(tracker.observePool('p', ready('True'))).to.equal('same')
      await clock.advance(1000)
      expect(tracker.observePool('p', ready('True'), () => 'r9', 'uid-2')).to.equal('new')
      expect(tracker.get('p')).to.deep.include({uid: 'uid-2', renewTime: 'r9', lastChange: 1000})
    })

    it('a changed observedGeneration is progress; an unchanged Ready is not', async () => {
      const {clock, tracker} = setup()
      tracker.observePool('p', ready('True', 1))
      await clock.advance(1000)
      expect(tracker.observePool('p', ready('True', 1))).to.equal('same')
      expect(tracker.get('p')?.lastChange).to.equal(0)
      expect(tracker.observePool('p', ready('True', 2))).to.equal('progress')
      expect(tracker.get('p')?.lastChange).to.equal(1000)
      expect(tracker.observePool('p', ready('False', 2))).to.equal('progress')
    })

    it('records when each change happened against the blind time cut out so far', () => {
      const clock = new FakeClock()
      let cut = 100
      const tracker = new HealthTracker(clock, () => cut)
      tracker.observePool('p', ready('True'), () => 'r1')
      expect(tracker.get('p')?.cutOutAtChange).to.equal(100)
      cut = 200
      tracker.observeLease('p', 'r2')
      expect(tracker.get('p')?.cutOutAtChange).to.equal(200)
      cut = 300
      tracker.observePool('p', ready('False'))
      expect(tracker.get('p')?.cutOutAtChange).to.equal(300)
      cut = 400
      tracker.restart('p')
      expect(tracker.get('p')?.cutOutAtChange).to.equal(400)
      cut = 500
      tracker.restartAll()
      expect(tracker.get('p')?.cutOutAtChange).to.equal(500)
    })

    it('our own write is remembered as the Ready last seen, not as progress; restart() moves one grace period, and both ignore an unknown pool', async () => {
      const {clock, tracker} = setup()
      tracker.observePool('p', ready('True'))
      await clock.advance(1000)
      tracker.recordOwnWrite('p', ready('Unknown', 3))
      expect(tracker.get('p')).to.deep.include({readyStatus: 'Unknown', observedGeneration: 3, lastChange: 0})
      expect(tracker.observePool('p', ready('Unknown', 3)), 'the watch shows our write').to.equal('same')
      tracker.restart('p')
      expect(tracker.get('p')?.lastChange).to.equal(1000)
      tracker.recordOwnWrite('q', ready('Unknown'))
      tracker.restart('q')
      expect(tracker.has('q')).to.equal(false)
      expect([...tracker.names()]).to.deep.equal(['p'])
      expect(tracker.size).to.equal(1)
      expect(tracker.forget('q')).to.equal(false)
      expect(tracker.forget('p')).to.equal(true)
    })
  })
})
