import {expect} from 'chai'
import {fieldsOf, itemLengths, metadataOf} from '../../../../src/kube/watch/json-extent.ts'
import {ListWatchCache} from '../../../../src/kube/watch/list-watch-cache.ts'
import {listMetadataOf, splitOversized} from '../../../../src/kube/watch/list-request.ts'
import type {SkippedObject} from '../../../../src/kube/watch/list-watch-oversized.ts'
import {LineSplitter, OVERSIZED_HEAD_BYTES, oversizedEvent} from '../../../../src/kube/watch/watch-request.ts'
import {FakeClock, flushPromises} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'
import {FakeLister, FakeWatcher, obj, type Obj} from './list-watch-fakes.ts'

/** A Lease as kube-apiserver writes it (built-in types: metadata first), padded to about `pad` characters. */
function leaseJson(name: string, pad = 0): string {
  return JSON.stringify({metadata: {name, namespace: 'ns', uid: 'u', resourceVersion: '7', annotations: {name: 'not-me'}}, spec: {holderIdentity: `${name}_${'x'.repeat(pad)}`, renewTime: '2026-01-01T00:00:00.000000Z'}})
}

describe('sizes read from JSON text (json-extent.ts)', () => {
  it('measures each item of a list, strings with escaped quotes and brackets included', () => {
    const items = [leaseJson('a'), '{"metadata":{"name":"b\\"]}"},"spec":{"v":[1,{"w":"}"}]}}', leaseJson('c', 500)]
    const text = `{"kind":"LeaseList","apiVersion":"coordination.k8s.io/v1","metadata":{"resourceVersion":"9"},"items":[${items.join(',')}]}`
    expect(itemLengths(text)).to.deep.equal(items.map((i) => i.length))
    expect(itemLengths('{"items":[]}')).to.deep.equal([])
    expect(itemLengths('{"kind":"x"}')).to.equal(undefined)
  })

  it('reads the plain fields of an object cut short, and a metadata block before anything nested in it', () => {
    const text = leaseJson('p1', 1000)
    const cut = text.slice(0, 120)
    expect(metadataOf(cut, 0)).to.deep.equal({name: 'p1', namespace: 'ns', resourceVersion: '7'})
    const fields = fieldsOf('{"a":"x","b":12,"c":{"d":1},"e":"cut sho', 0)
    expect(fields.get('a')).to.equal('x')
    expect(fields.get('b')).to.equal(12)
    expect(fields.get('c')).to.deep.equal({at: 20})
    expect(fields.has('e')).to.equal(false)
  })

  it("finds a list's metadata before the items (built-in lists) or after them (custom resources, keys sorted), and only there", () => {
    expect(listMetadataOf('{"kind":"LeaseList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"tok"},"items":[{"metadata":{"name":"big"', '')).to.deep.equal({continue: 'tok', resourceVersion: '9'})
    expect(listMetadataOf('{"kind":"LeaseList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[{', '')).to.deep.equal({continue: undefined, resourceVersion: '9'})
    const tail = 'xxx"}}}],"kind":"MachinePoolList","metadata":{"continue":"tok2","resourceVersion":"10"}}\n'
    expect(listMetadataOf('{"apiVersion":"x/v1","items":[{"apiVersion":"x/v1","kind":"MachinePool","metadata":{"name":"big"', tail)).to.deep.equal({continue: 'tok2', resourceVersion: '10'})
    // An item's metadata at the end of a tail cut from the middle of a list is not the list's.
    expect(listMetadataOf('{"apiVersion":"x/v1","items":[{', '"metadata":{"name":"n"},"spec":{}}')).to.equal(undefined)
    expect(listMetadataOf('{"apiVersion":"x/v1","items":[{', '')).to.equal(undefined)
  })

  it('takes an object over the limit out of a parsed page, named, and measures nothing in a page within the limit', () => {
    const items = [leaseJson('a'), leaseJson('big', 2000), leaseJson('c')]
    const text = `{"metadata":{},"items":[${items.join(',')}]}`
    const parsed = (JSON.parse(text) as {items: Obj[]}).items
    const {kept, oversized} = splitOversized(text, parsed, 1000)
    expect(kept.map((o) => o.metadata.name)).to.deep.equal(['a', 'c'])
    expect(oversized).to.deep.equal([{name: 'big', namespace: 'ns', resourceVersion: '7', bytes: items[1]!.length, limitBytes: 1000}])
    expect(splitOversized(text, parsed, text.length).oversized).to.deep.equal([])
  })
})

describe('watch lines over the limit of one event', () => {
  function split(chunks: readonly Buffer[], maxLineBytes: number) {
    const lines: string[] = []
    const oversized: {head: string; bytes: number}[] = []
    const splitter = new LineSplitter((line) => lines.push(line), {maxLineBytes, onOversized: (head, bytes) => oversized.push({head, bytes})})
    for (const chunk of chunks) splitter.push(chunk)
    return {lines, oversized}
  }

  it('are never held whole: their head and length are reported, whatever the chunking, and the lines around them pass', () => {
    const big = `{"type":"MODIFIED","object":${leaseJson('big', 300_000)}}`
    const bytes = Buffer.from(`{"type":"ADDED"}\n${big}\n{"type":"DELETED"}\n`)
    for (const size of [bytes.length, 65_536, 4_096, 1_000]) {
      const chunks: Buffer[] = []
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size))
      const {lines, oversized} = split(chunks, 100_000)
      expect(lines, `chunks of ${size}`).to.deep.equal(['{"type":"ADDED"}', '{"type":"DELETED"}'])
      expect(oversized.map((o) => o.bytes), `chunks of ${size}`).to.deep.equal([big.length])
      expect(oversized[0]!.head).to.equal(big.slice(0, OVERSIZED_HEAD_BYTES))
    }
    // Exactly at the limit is within it.
    expect(split([Buffer.from(`${'x'.repeat(10)}\n`)], 10).lines).to.have.length(1)
    expect(split([Buffer.from(`${'x'.repeat(11)}\n`)], 10).oversized).to.have.length(1)
  })

  it('are named from their head: type, name, namespace, resourceVersion', () => {
    const head = `{"type":"MODIFIED","object":${leaseJson('big', 300_000)}}`.slice(0, OVERSIZED_HEAD_BYTES)
    expect(oversizedEvent(head, 300_200, 262_144)).to.deep.equal({type: 'MODIFIED', name: 'big', namespace: 'ns', resourceVersion: '7', bytes: 300_200, limitBytes: 262_144})
  })
})

describe('ListWatchCache and objects over the size limits (fake lister and watcher)', () => {
  function setup(objects: Obj[], configure: (lister: FakeLister) => void = () => {}) {
    const clock = new FakeClock()
    const lister = new FakeLister(...objects)
    configure(lister)
    const watcher = new FakeWatcher()
    const logger = new FakeLogger()
    const skipped: SkippedObject[] = []
    const cleared: string[] = []
    const cache = new ListWatchCache<Obj>({resource: 'things', list: lister.list, watch: watcher.watch, logger, clock, random: () => 0, pageSize: 8, observer: {skipped: (o) => skipped.push(o), cleared: (k) => cleared.push(k)}})
    const controller = new AbortController()
    const running = cache.start(controller.signal)
    return {clock, lister, watcher, logger, cache, skipped, cleared, stop: async () => (controller.abort(), await running)}
  }
  const small = (name: string) => obj(name, '1', 'ok')
  const big = (name: string) => obj(name, '1', 'x'.repeat(1_000))

  it('a page over the answer cap is asked again with half the limit down to one object; that object is passed over and reported; the view is whole', async () => {
    const objects = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].map((n) => (n === 'c' ? big(n) : small(n)))
    const t = setup(objects, (lister) => (lister.maxPageBytes = 900))
    await flushPromises()
    expect(t.cache.isWhole()).to.equal(true)
    expect(t.cache.list().map((o) => o.metadata.name)).to.deep.equal(['a', 'b', 'd', 'e', 'f', 'g', 'h', 'i', 'j'])
    // a-h and a-d too large, a-b fits; c-f, c-d too large; c alone passed over; back up from d.
    expect(t.lister.limits).to.deep.equal([8, 4, 2, 4, 2, 1, 2, 4, 8])
    expect(t.skipped.map((o) => o.key)).to.deep.equal(['c'])
    expect(t.logger.at('warn').map((l) => l.msg)).to.deep.equal(['object larger than the limit of one object left out of the cache; the view stays whole without it'])
    await t.stop()
  })

  it('without a continue token in the answer of one object the list fails and is retried, as before (never a list cut short)', async () => {
    const t = setup([small('a'), big('b'), small('c')], (lister) => {
      lister.maxPageBytes = 900
      lister.skipUnknown = true
    })
    await flushPromises()
    expect(t.cache.isWhole()).to.equal(false)
    expect(t.cache.size).to.equal(0)
    expect(t.logger.at('warn').map((l) => l.msg)).to.include('list failed; retrying after backoff')
    await t.stop()
  })

  it('an object over the limit in a page that fits is left out and reported once; a relist without it clears it', async () => {
    const t = setup([small('a'), small('c')], (lister) => (lister.oversized = [{name: 'b', resourceVersion: '2', bytes: 300_000, limitBytes: 262_144}]))
    await flushPromises()
    expect(t.cache.isWhole()).to.equal(true)
    expect(t.cache.list().map((o) => o.metadata.name)).to.deep.equal(['a', 'c'])
    expect(t.skipped).to.deep.equal([{name: 'b', resourceVersion: '2', bytes: 300_000, limitBytes: 262_144, key: 'b'}])
    expect(t.cache.oversizedCount).to.equal(1)
    t.cache.requestRelist('test')
    await flushPromises()
    expect(t.skipped, 'still oversized: not reported again').to.have.length(1)
    t.lister.oversized = []
    t.cache.requestRelist('test')
    await flushPromises()
    expect(t.cleared).to.deep.equal(['b'])
    expect(t.cache.oversizedCount).to.equal(0)
    await t.stop()
  })

  it('a watch event over the limit removes the object it names (a delete for handlers), reports it once, moves the resourceVersion; the view stays whole', async () => {
    const t = setup([small('a'), small('b')])
    await flushPromises()
    const deletes: string[] = []
    t.cache.onEvent((e) => e.type === 'delete' && deletes.push(e.key))
    const callbacks = t.watcher.current.callbacks
    callbacks.oversized?.({type: 'MODIFIED', name: 'b', resourceVersion: '201', bytes: 1_500_000, limitBytes: 262_144})
    callbacks.oversized?.({type: 'MODIFIED', name: 'b', resourceVersion: '202', bytes: 1_500_000, limitBytes: 262_144})
    expect(t.cache.list().map((o) => o.metadata.name)).to.deep.equal(['a'])
    expect(deletes).to.deep.equal(['b'])
    expect(t.cache.resourceVersion).to.equal('202')
    expect(t.skipped.map((o) => `${o.key} ${o.bytes}`)).to.deep.equal(['b 1500000'])
    expect(t.cache.isWhole()).to.equal(true)
    expect(t.watcher.live).to.have.length(1)
    // Small again: taken in, cleared.
    t.watcher.send('MODIFIED', obj('b', '203', 'ok'))
    expect(t.cleared).to.deep.equal(['b'])
    expect(t.cache.get('b')?.metadata.resourceVersion).to.equal('203')
    await t.stop()
  })

  it('a watch event over the limit that its head does not name makes the cache relist, which passes over the object by the list rules', async () => {
    const t = setup([small('a')])
    await flushPromises()
    expect(t.lister.calls).to.equal(1)
    t.watcher.current.callbacks.oversized?.({bytes: 2_000_000, limitBytes: 262_144})
    await flushPromises()
    expect(t.lister.calls).to.equal(2)
    expect(t.cache.isWhole()).to.equal(true)
    await t.stop()
  })
})

describe('watch lines under the limit, any chunking (the splitter with a limit set)', () => {
  it('gives the same lines as without a limit, for random chunkings of many lines of many sizes', () => {
    let seed = 7
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
    const lines = Array.from({length: 300}, (_, i) => `{"type":"MODIFIED","i":${i},"pad":"${'y'.repeat(Math.floor(random() * 3000))}"}`)
    const bytes = Buffer.from(lines.join('\n') + '\n')
    for (let round = 0; round < 20; round++) {
      const got: string[] = []
      const oversized: number[] = []
      const splitter = new LineSplitter((l) => got.push(l), {maxLineBytes: 262_144, onOversized: (_h, b) => oversized.push(b)})
      for (let i = 0; i < bytes.length; ) {
        const size = 1 + Math.floor(random() * 9000)
        splitter.push(bytes.subarray(i, i + size))
        i += size
      }
      expect(oversized).to.deep.equal([])
      expect(got).to.deep.equal(lines)
    }
  })
})
