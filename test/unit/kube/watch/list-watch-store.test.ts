import {expect} from 'chai'
import {objectKey, ObjectStore} from '../../../../src/kube/watch/list-watch-store.ts'
import {obj, type Obj} from './list-watch-fakes.ts'

describe('list+watch store', () => {
  it('keys cluster-scoped objects by name and namespaced ones by namespace/name', () => {
    expect(objectKey({metadata: {name: 'p1'}})).to.equal('p1')
    expect(objectKey({metadata: {name: 'l1', namespace: 'ns'}})).to.equal('ns/l1')
    expect(objectKey({metadata: {}})).to.be.undefined
  })

  it('a replace reports adds, updates (with the old object) and deletes, and nothing for unchanged objects', () => {
    const store = new ObjectStore<Obj>()
    store.replace(new Map([['kept', obj('kept', '1')], ['moved', obj('moved', '1')], ['gone', obj('gone', '1')]]))
    const fresh = new Map([['kept', obj('kept', '1')], ['moved', obj('moved', '5')], ['new', obj('new', '6')]])
    const events = store.replace(fresh)
    expect(events).to.deep.equal([
      {type: 'delete', key: 'gone', object: obj('gone', '1')},
      {type: 'upsert', key: 'moved', object: obj('moved', '5'), old: obj('moved', '1')},
      {type: 'upsert', key: 'new', object: obj('new', '6')},
    ])
    expect(store.list().map((o) => o.metadata.name).sort()).to.deep.equal(['kept', 'moved', 'new'])
  })

  it('deleting an unknown key is no event', () => {
    expect(new ObjectStore<Obj>().delete('nope')).to.be.undefined
  })
})
