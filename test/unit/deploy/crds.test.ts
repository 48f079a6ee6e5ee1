import {expect} from 'chai'
import {readFile, readdir} from 'node:fs/promises'
import {renderCrdFiles} from '../../../src/deploy/crds/render-crds.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {poolSchema, PROVIDER_ID_IMMUTABLE} from '../../../src/deploy/crds/pool-crds.ts'

const CRD_DIR = new URL('../../../deploy/crds/', import.meta.url)

describe('pool CRDs', () => {
  it('deploy/crds is what src/deploy/crds/pool-crds.ts renders (run `npm run crds` after changing it)', async () => {
    const rendered = renderCrdFiles()
    expect((await readdir(CRD_DIR)).sort()).to.deep.equal([...rendered.keys()].sort())
    for (const [name, text] of rendered) expect(await readFile(new URL(name, CRD_DIR), 'utf8'), name).to.equal(text)
  })

  it('accept what IronCore accepts: any taint effect, any condition status, null times, an atomic conditions list, providerID immutable once set', () => {
    for (const kind of Object.values(POOL_KINDS)) {
      const schema = poolSchema(kind) as {properties: Record<string, Record<string, unknown>>}
      const spec = schema.properties.spec as {properties: {taints: {items: {properties: {effect: object}}}}; 'x-kubernetes-validations': object[]}
      expect(spec.properties.taints.items.properties.effect, kind.name).to.deep.equal({type: 'string'})
      expect(spec['x-kubernetes-validations']).to.deep.equal([PROVIDER_ID_IMMUTABLE])
      const status = schema.properties.status as {properties: {conditions: {items: {properties: Record<string, object>}; 'x-kubernetes-list-type': string}}}
      expect(status.properties.conditions['x-kubernetes-list-type']).to.equal('atomic')
      const condition = status.properties.conditions.items.properties
      expect(condition.status).to.deep.equal({type: 'string'})
      expect(condition.lastUpdateTime).to.include({nullable: true})
      expect(condition.lastTransitionTime).to.include({nullable: true})
    }
  })
})
