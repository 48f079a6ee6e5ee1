/** listAll: every page of one list as one snapshot; with keep, only the objects asked about are held. */
import {expect} from 'chai'
import {ObjectGate} from '../../../../src/kube/watch/list-watch-gate.ts'
import {listAll} from '../../../../src/kube/watch/list-watch-list.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'
import {FakeLister, obj, type Obj} from './list-watch-fakes.ts'

const gate = () => new ObjectGate<Obj>({resource: 'leases ns', logger: new FakeLogger(), validate: undefined, onInvalid: () => {}})
const signal = new AbortController().signal

describe('listAll (list-watch-list.ts)', () => {
  it('reads every page and holds every object, keyed, at the first page\'s resourceVersion', async () => {
    const lister = new FakeLister(obj('a', '1'), obj('b', '2'), obj('c', '3'), obj('d', '4'), obj('e', '5'))
    const snapshot = await listAll(lister.list, 2, gate(), signal)
    expect(lister.calls).to.equal(3)
    expect([...snapshot.objects.keys()]).to.deep.equal(['a', 'b', 'c', 'd', 'e'])
    expect([...snapshot.keys]).to.deep.equal(['a', 'b', 'c', 'd', 'e'])
    expect(snapshot.resourceVersion).to.equal('100')
  })

  it('with keep, still reads every page but holds and keys only the objects kept (a batch of due pools at 100k)', async () => {
    const lister = new FakeLister(obj('a', '1'), obj('b', '2'), obj('c', '3'), obj('d', '4'), obj('e', '5'))
    const wanted = new Set(['b', 'e', 'zz'])
    const snapshot = await listAll(lister.list, 2, gate(), signal, undefined, (o) => wanted.has(o.metadata.name))
    expect(lister.calls, 'the last page holds e: every page is read').to.equal(3)
    expect([...snapshot.objects.keys()]).to.deep.equal(['b', 'e'])
    expect([...snapshot.keys]).to.deep.equal(['b', 'e'])
    expect(snapshot.objects.get('e')?.metadata.resourceVersion).to.equal('5')
  })
})
