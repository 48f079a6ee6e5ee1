/**
 * The evidence clock (blind time cut out), on its own: the lifecycle tests reach it only through the
 * engine. Written for `npm run mutation` (issue 30).
 */
import {expect} from 'chai'
import {EvidenceClock} from '../../../../../src/core/lifecycle/sight/evidence-clock.ts'
import {FakeClock} from '../../../../support/fake-clock.ts'

describe('EvidenceClock', () => {
  it('starts stopped: nothing is evidence before the view has been whole', async () => {
    const real = new FakeClock()
    await real.advance(5_000)
    const clock = new EvidenceClock(real)
    expect(clock.running).to.equal(false)
    await real.advance(3_000)
    expect(clock.monotonic()).to.equal(5_000)
    expect(clock.cutOutMs).to.equal(3_000)
    clock.resume()
    expect(clock.running).to.equal(true)
    await real.advance(1_000)
    expect(clock.monotonic()).to.equal(6_000)
  })

  it('stands still while blind and runs on from where it stopped; deadlines on it move by the spell', async () => {
    const real = new FakeClock()
    const clock = new EvidenceClock(real)
    clock.resume()
    await real.advance(10_000)
    clock.stop()
    await real.advance(4_000)
    expect(clock.monotonic()).to.equal(10_000)
    expect(clock.cutOutMs).to.equal(4_000)
    expect(clock.toReal(12_000), 'as of now, the spell running').to.equal(16_000)
    clock.resume()
    await real.advance(1_000)
    expect(clock.monotonic()).to.equal(11_000)
    expect(clock.cutOutMs).to.equal(4_000)
    expect(clock.toReal(12_000)).to.equal(16_000)
  })

  it('a spell seen late steps it back to when the spell began, never past the end of the previous spell', async () => {
    const real = new FakeClock()
    const clock = new EvidenceClock(real)
    clock.resume()
    await real.advance(10_000)
    clock.stop(3_000)
    expect(clock.monotonic()).to.equal(7_000)
    clock.resume() // at 10 s real
    await real.advance(2_000)
    clock.stop(5_000) // began 5 s ago, but the view was whole again only 2 s ago
    expect(clock.monotonic()).to.equal(7_000)
    clock.resume()
    clock.stop(-1_000) // a negative lag is none
    expect(clock.monotonic()).to.equal(7_000)
  })

  it('a second stop or resume changes nothing', async () => {
    const real = new FakeClock()
    const clock = new EvidenceClock(real)
    clock.resume()
    await real.advance(10_000)
    clock.stop()
    await real.advance(1_000)
    clock.stop(5_000)
    expect(clock.monotonic()).to.equal(10_000)
    clock.resume()
    await real.advance(1_000)
    clock.resume()
    expect(clock.monotonic()).to.equal(11_000)
    expect(clock.cutOutMs).to.equal(1_000)
  })

  it('reads the wall clock and sets timers on the real clock', async () => {
    const real = new FakeClock(Date.parse('2026-01-01T00:00:00Z'))
    const clock = new EvidenceClock(real)
    expect(clock.wall()).to.equal(real.wall())
    let fired = 0
    clock.setTimer(1_000, () => fired++)
    await real.advance(999)
    expect(fired).to.equal(0)
    await real.advance(1)
    expect(fired, 'fires on real time though the clock stands still').to.equal(1)
  })
})
