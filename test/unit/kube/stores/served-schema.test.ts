/**
 * The write plan per kind, as ironpool decides it from the OpenAPI v3 documents IronCore's API serves
 * (recorded in test/fixtures/ironcore-api/) and from a CRD-shaped document like kube-apiserver's.
 */
import {expect} from 'chai'
import {CONDITION_FIELDS, FULL_WRITE_PLAN} from '../../../../src/core/types.ts'
import {POOL_KINDS} from '../../../../src/core/pool-kinds.ts'
import {poolCrd} from '../../../../src/deploy/crds/pool-crds.ts'
import {describeWritePlan, writePlanFromOpenApi} from '../../../../src/kube/stores/served-schema.ts'
import {ironcoreOpenApi} from '../../../support/ironcore-fixtures.ts'

/** A group-version document as kube-apiserver publishes a CRD: the schema inline, named by its GVK. */
function crdDocument(kind: (typeof POOL_KINDS)[keyof typeof POOL_KINDS]): object {
  const crd = poolCrd(kind) as {spec: {versions: {schema: {openAPIV3Schema: object}}[]}}
  const schema = {...crd.spec.versions[0]!.schema.openAPIV3Schema, 'x-kubernetes-group-version-kind': [{group: kind.group, version: kind.version, kind: kind.kind}]}
  return {openapi: '3.0.0', components: {schemas: {[`dev.ironcore.${kind.name}.v1alpha1.${kind.kind}`]: schema}}}
}

describe('write plan from the served OpenAPI v3 document', () => {
  it("IronCore's MachinePool: conditions with every field (lastUpdateTime included)", () => {
    const plan = writePlanFromOpenApi(ironcoreOpenApi(POOL_KINDS.machine), POOL_KINDS.machine)
    expect(plan).to.deep.equal({conditions: true, conditionFields: [...CONDITION_FIELDS]})
    expect(describeWritePlan(POOL_KINDS.machine, plan!)).to.equal('machinepools conditions with every field')
  })

  it("IronCore's VolumePool: conditions without lastUpdateTime", () => {
    const plan = writePlanFromOpenApi(ironcoreOpenApi(POOL_KINDS.volume), POOL_KINDS.volume)
    expect(plan).to.deep.equal({conditions: true, conditionFields: ['type', 'status', 'reason', 'message', 'observedGeneration', 'lastTransitionTime']})
    expect(describeWritePlan(POOL_KINDS.volume, plan!)).to.equal('volumepools conditions without lastUpdateTime')
  })

  it("IronCore's BucketPool: no conditions at all", () => {
    const plan = writePlanFromOpenApi(ironcoreOpenApi(POOL_KINDS.bucket), POOL_KINDS.bucket)
    expect(plan).to.deep.equal({conditions: false, conditionFields: []})
    expect(describeWritePlan(POOL_KINDS.bucket, plan!)).to.equal('this API has no conditions for bucketpools: Ready is not written, the Lease is renewed')
  })

  for (const kind of Object.values(POOL_KINDS)) {
    it(`ironpool's ${kind.kind} CRD: conditions with every field`, () => {
      expect(writePlanFromOpenApi(crdDocument(kind), kind)).to.deep.equal(FULL_WRITE_PLAN)
    })
  }

  it('says nothing (undefined) when the document does not describe the kind', () => {
    expect(writePlanFromOpenApi(ironcoreOpenApi(POOL_KINDS.machine), POOL_KINDS.bucket)).to.equal(undefined)
    expect(writePlanFromOpenApi('not a document', POOL_KINDS.bucket)).to.equal(undefined)
  })
})
