import {expect} from 'chai'
import {readFile, readdir} from 'node:fs/promises'
import {renderCrdFiles} from '../../../src/deploy/render-crds.ts'
import {validatePool} from '../../../src/deploy/pool-validator.ts'

const CRD_DIR = new URL('../../../deploy/crds/', import.meta.url)

describe('pool CRDs', () => {
  it('deploy/crds is what src/deploy/pool-crds.ts renders (run `npm run crds` after changing it)', async () => {
    const rendered = renderCrdFiles()
    expect((await readdir(CRD_DIR)).sort()).to.deep.equal([...rendered.keys()].sort())
    for (const [name, text] of rendered) expect(await readFile(new URL(name, CRD_DIR), 'utf8'), name).to.equal(text)
  })

  it('declares a Ready condition schema that refuses an unknown status and requires reason and message', () => {
    const validate = (object: object) => validatePool('bucket', object).ok
    const pool = (condition: object) => ({apiVersion: 'storage.ironcore.dev/v1alpha1', kind: 'BucketPool', metadata: {name: 'b'}, status: {conditions: [condition]}})
    expect(validate(pool({type: 'Ready', status: 'True', reason: 'HeartbeatReceived', message: 'ok'}))).to.be.true
    expect(validate(pool({type: 'Ready', status: 'Maybe', reason: 'r', message: 'm'}))).to.be.false
    expect(validate(pool({type: 'Ready', status: 'True'}))).to.be.false
    expect(validatePool('bucket', pool({type: 'Ready', status: 'Maybe', reason: 'r', message: 'm'}))).to.deep.include({ok: false, field: '/status/conditions/0/status'})
    expect(validate(pool({type: 'Ready', status: 'True', reason: 'r', message: 'm', lastUpdateTime: 'yesterday'}))).to.be.false
  })
})
