import {execFileSync} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {expect} from 'chai'
import {Interner, sameName} from '../../../../../src/kube/watch/caches/projections.ts'

const PROBE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'string-instances-probe.ts')

describe('strings shared between cached objects (projections.ts: Interner, sameName)', () => {
  it('the intern table hands out the first instance of a value, and passes anything but a string through', () => {
    const strings = new Interner({maxLength: 10, maxEntries: 10})
    expect(strings.intern('True')).to.equal('True')
    expect(strings.intern('True')).to.equal('True')
    expect(strings.size).to.equal(1)
    for (const value of [undefined, null, 3, {a: 1}]) expect(strings.intern(value)).to.equal(value)
    expect(strings.size).to.equal(1)
  })

  it('is bounded: a string longer than maxLength is not taken, nor any new one once maxEntries are held; what it holds it keeps', () => {
    const strings = new Interner({maxLength: 8, maxEntries: 3})
    strings.intern('123456789')
    expect(strings.size, 'too long').to.equal(0)
    for (let i = 0; i < 1000; i++) strings.intern(`unique-${i}`)
    expect(strings.size, 'full after three').to.equal(3)
    expect(strings.intern('unique-0')).to.equal('unique-0')
    expect(strings.size).to.equal(3)
  })

  it('the default limits bound the table whatever arrives', () => {
    const strings = new Interner()
    for (let i = 0; i < 20_000; i++) strings.intern(`attacker-${i}`)
    expect(strings.size).to.be.at.most(1024)
  })

  it('sameName: the held string when equal, the value otherwise (or when nothing is held)', () => {
    expect(sameName('p1', 'p1')).to.equal('p1')
    expect(sameName('p1', 'p2')).to.equal('p1')
    expect(sameName('p1', undefined)).to.equal('p1')
  })

  it('in a heap snapshot: a pool and its Lease hold one instance of their name, the condition reason and the namespace one for all; the times one each', function () {
    this.timeout(60_000)
    const out = execFileSync(process.execPath, ['--disable-warning=ExperimentalWarning', PROBE], {encoding: 'utf8'})
    const counts = JSON.parse(out) as {names: number[]; reason: number; namespace: number; time: number; held: number[]}
    expect(counts.held).to.deep.equal([3, 3])
    // Each count includes the probe's own instance, the one it serialised the served objects from.
    expect(counts.names, 'each name: the probe\'s and one for the pool, the Lease and both keys').to.deep.equal([2, 2, 2])
    expect(counts.reason, 'the reason of three pools: one instance').to.equal(2)
    expect(counts.namespace, 'the namespace of three Leases: one instance').to.equal(2)
    // Not shared (each pool's own): three lastTransitionTimes and three renewTimes. This shows the probe
    // counts copies, so the counts above can fail.
    expect(counts.time).to.equal(7)
  })
})
