/**
 * Reading what IronCore's API serves (recorded objects, test/fixtures/ironcore-api/): every pool stays
 * tracked, NoExecute taints and null times are accepted, other writers' conditions pass untouched; a
 * malformed Ready entry is logged once with its field and read as no Ready; ironpool's CRDs accept
 * every recorded object too.
 */
import {Ajv} from 'ajv'
import addFormatsModule from 'ajv-formats'
import {expect} from 'chai'
import {findCondition} from '../../../src/core/conditions.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import type {Pool} from '../../../src/core/types.ts'
import {poolSchema} from '../../../src/deploy/crds/pool-crds.ts'
import {validateLease, validatePool} from '../../../src/deploy/crds/pool-validator.ts'
import {ListWatchCache} from '../../../src/kube/watch/list-watch-cache.ts'
import {FakeClock, flushPromises} from '../../support/fake-clock.ts'
import {FakeLogger} from '../../support/fake-logger.ts'
import {ironcoreFixture, RECORDED_POOLS} from '../../support/ironcore-fixtures.ts'
import {FakeLister, FakeWatcher, type Obj} from '../kube/watch/list-watch-fakes.ts'

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default

function recorded(file: string): Pool {
  return ironcoreFixture(file) as Pool
}

/** A pool cache on scripted list and watch, validating as the real one does. */
function poolCache(objects: object[]) {
  const logger = new FakeLogger()
  const lister = new FakeLister(...(objects as Obj[]))
  const watcher = new FakeWatcher()
  const cache = new ListWatchCache<Obj>({resource: 'pools', list: lister.list, watch: watcher.watch, logger, clock: new FakeClock(), random: () => 0, validate: validatePool})
  const controller = new AbortController()
  const running = cache.start(controller.signal)
  return {cache, logger, watcher, stop: async () => (controller.abort(), await running)}
}

describe("IronCore's served objects (recorded fixtures)", () => {
  for (const {file, kind} of RECORDED_POOLS) {
    it(`${file}: a ${kind.kind} passes ironpool's checks with nothing to report`, () => {
      const result = validatePool(recorded(file))
      expect(result).to.deep.include({ok: true})
      expect(result.ok && result.problem).to.equal(undefined)
    })
  }

  it('each recorded pool stays tracked in the watch cache, and nothing is logged', async () => {
    // The two strategic-merge files are one pool (noexecute-smp) after each patch: the second is kept.
    const objects = RECORDED_POOLS.map(({file}) => recorded(file))
    const t = poolCache(objects)
    await flushPromises()
    const names = [...new Set(objects.map((p) => p.metadata.name))].sort()
    expect(names).to.have.length(6)
    expect(t.cache.list().map((p) => p.metadata.name).sort()).to.deep.equal(names)
    expect(t.logger.entries.filter((e) => e.level === 'warn')).to.deep.equal([])
    await t.stop()
  })

  it('a NoExecute taint and another writer’s condition with null times pass through untouched', () => {
    const original = recorded('machinepool-noexecute-nulltimes.json')
    const copy = structuredClone(original)
    const result = validatePool(copy)
    expect(result.ok).to.be.true
    expect(copy).to.deep.equal(original)
    expect(copy.spec?.taints).to.deep.equal([{key: 'maintenance', effect: 'NoExecute'}])
    expect(findCondition(copy.status?.conditions, 'NetworkReady')).to.include({lastUpdateTime: null, lastTransitionTime: null})
    expect(findCondition(copy.status?.conditions, 'Ready')).to.include({status: 'True', reason: 'HeartbeatReceived'})
  })

  it('a Ready entry with null times (strategic merge patch, no times given) is a well-formed Ready', () => {
    const pool = recorded('machinepool-status-strategic-merge-second.json')
    expect(validatePool(pool)).to.deep.include({ok: true})
    expect(findCondition(pool.status?.conditions, 'Ready')).to.include({status: 'False', lastTransitionTime: null})
  })

  it('a malformed Ready entry is logged once with its field and read as no Ready; the pool and the other conditions stay', async () => {
    const bad = structuredClone(recorded('machinepool-noexecute-nulltimes.json'))
    const conditions = bad.status!.conditions! as unknown as Record<string, unknown>[]
    conditions[1]!.status = 'Maybe'
    const t = poolCache([bad])
    await flushPromises()
    const held = t.cache.get('noexecute') as unknown as Pool
    expect(held).to.not.equal(undefined)
    expect(findCondition(held.status?.conditions, 'Ready')).to.equal(undefined)
    expect(held.status?.conditions?.map((c) => c.type)).to.deep.equal(['NetworkReady'])
    // The same object again (a relist or an unrelated update) is not logged again.
    const again = structuredClone(recorded('machinepool-noexecute-nulltimes.json'))
    ;(again.status!.conditions! as unknown as Record<string, unknown>[])[1]!.status = 'Maybe'
    t.watcher.send('MODIFIED', {...again, metadata: {...again.metadata, resourceVersion: '999'}})
    await flushPromises()
    const warnings = t.logger.entries.filter((e) => e.level === 'warn')
    expect(warnings).to.have.length(1)
    expect(warnings[0]!.obj).to.include({field: '/status/conditions/1/status'})
    expect(t.cache.get('noexecute')).to.not.equal(undefined)
    await t.stop()
  })

  it('refuses only a pool the engine cannot key: no name, or a generation that is not a count', () => {
    expect(validatePool({metadata: {}})).to.deep.include({ok: false, field: '/metadata'})
    expect(validatePool({metadata: {name: 'p', generation: -1}})).to.deep.include({ok: false, field: '/metadata/generation'})
    expect(validatePool({metadata: {name: 'p'}, spec: {taints: [{effect: 'SomethingNew'}]}, status: {state: 'Levitating'}})).to.deep.include({ok: true})
  })

  it("a Lease's malformed spec field is reported, never refused", () => {
    expect(validateLease({spec: {holderIdentity: 'p_1', leaseDurationSeconds: 40, renewTime: '2026-12-01T09:00:00.000000Z'}})).to.deep.equal({ok: true})
    expect(validateLease({spec: {leaseDurationSeconds: -5}})).to.deep.include({ok: true, problem: {field: '/spec/leaseDurationSeconds', problem: 'must be >= 1; read as absent'}})
  })

  it("ironpool's CRDs accept every recorded object (NoExecute, null times, an empty providerID)", () => {
    const ajv = new Ajv({strict: false, allErrors: true})
    addFormats(ajv)
    ajv.addFormat('int64', {type: 'number', validate: Number.isSafeInteger})
    ajv.addFormat('int32', {type: 'number', validate: (n: number) => Number.isInteger(n)})
    for (const {file, kind} of RECORDED_POOLS) {
      const validate = ajv.compile(poolSchema(POOL_KINDS[kind.name]))
      // conditions on a BucketPool: IronCore drops them, ironpool's CRD has them; the recorded object has none.
      expect(validate(recorded(file)), `${file}: ${JSON.stringify(validate.errors)}`).to.be.true
    }
  })
})
