import {Ajv} from 'ajv'
import {expect} from 'chai'
import {CONSUMED_LEASE_SCHEMA, CONSUMED_POOL_SCHEMA, READY_ENTRY_SCHEMA} from '../../../src/deploy/crds/pool-validator.ts'

// The validator compiles its schemas without checking them against JSON Schema's meta-schema (that
// check cost every process 50 ms at start-up): the check is made here, once, where a broken schema
// fails the build instead.
describe('the schemas of what ironpool reads', () => {
  for (const [name, schema] of Object.entries({CONSUMED_POOL_SCHEMA, READY_ENTRY_SCHEMA, CONSUMED_LEASE_SCHEMA})) {
    it(`${name} is a valid JSON Schema`, () => {
      const ajv = new Ajv({strict: true, allowUnionTypes: true})
      const valid = ajv.validateSchema(schema)
      expect(ajv.errors ?? [], ajv.errorsText()).to.deep.equal([])
      expect(valid).to.equal(true)
    })
  }

  it('the meta-schema check catches a broken schema (this test can fail)', () => {
    const ajv = new Ajv({strict: true})
    expect(ajv.validateSchema({type: 'objekt'})).to.equal(false)
  })
})
