import {ApiException} from '@kubernetes/client-node'
import {expect} from 'chai'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {formatMicroTime} from '../../../src/core/conditions.ts'
import {POOL_KINDS, type PoolKind} from '../../../src/core/pool-kinds.ts'
import {POOLLET_WRITE_BOUNDS as B} from '../../../src/deploy/rbac/admission-policy.ts'
import {DEPLOY_DIR} from '../../support/control-plane.ts'
import {KubeObjects} from '../../support/kube-objects.ts'

const machine = POOL_KINDS.machine
const volume = POOL_KINDS.volume
/** The review's padding: a holderIdentity of 1.45 MB. */
const HUGE = 1_450_000

/** What a write answered: 'ok', or the HTTP status and the server's message. */
async function outcome(write: () => Promise<unknown>): Promise<{code: number; message: string}> {
  try {
    await write()
    return {code: 200, message: 'ok'}
  } catch (error) {
    if (!(error instanceof ApiException)) throw error
    const body = (typeof error.body === 'string' ? JSON.parse(error.body) : error.body) as {message?: string}
    return {code: error.code, message: body.message ?? String(error.body)}
  }
}

const ready = (over: {type?: string; reason?: string; message?: string} = {}) => ({
  type: over.type ?? 'Ready',
  status: 'True',
  reason: over.reason ?? 'HeartbeatReceived',
  message: over.message ?? 'machine runtime status probe succeeded',
  lastTransitionTime: '2026-01-01T00:00:00Z',
})

/**
 * deploy/policies' size bounds on the real kube-apiserver: what a poollet writes to its own Lease and
 * its own pool's status is refused past each bound (422, the message naming the field, what was
 * found and the limit) and admitted at it; the review's 1.45 MB holderIdentity among them. Other users
 * (the admin here) are not evaluated by the policy at all.
 */
describe('deploy/policies: size bounds on what a poollet writes (real API server)', function () {
  this.timeout(120_000)
  let plane: ControlPlane
  let admin: KubeObjects
  const poollet = new Map<PoolKind, KubeObjects>()

  before(async () => {
    plane = await ControlPlane.start()
    await plane.kubectl(['apply', '-k', `${DEPLOY_DIR}default`])
    await plane.kubectl(['wait', '--for=condition=Established', '--timeout=30s', ...[machine, volume].map((kind) => `crd/${kind.plural}.${kind.group}`)])
    admin = new KubeObjects(plane.adminKubeconfig)
    await admin.createPool(machine, 'p1')
    await admin.createPool(volume, 'v1')
    poollet.set(machine, new KubeObjects((await plane.userIdentity(`${machine.poolletUserPrefix}p1`, [machine.poolletGroup])).kubeconfig))
    poollet.set(volume, new KubeObjects((await plane.userIdentity(`${volume.poolletUserPrefix}v1`, [volume.poolletGroup])).kubeconfig))
  })
  after(async () => {
    await plane?.stop()
  })

  const lease = (holderIdentity: string) => ({holderIdentity, leaseDurationSeconds: 40, renewTime: formatMicroTime(new Date())}) as never

  it(`refuses the poollet's own Lease with a holderIdentity of 1.45 MB (created, or written over a good one), naming the field and the limit of ${B.holderIdentity}`, async () => {
    const p1 = poollet.get(machine)!
    const created = await outcome(() => p1.createLease(machine, 'p1', lease('x'.repeat(HUGE))))
    expect(created.code).to.equal(422)
    expect(created.message).to.include(`spec.holderIdentity is ${HUGE} characters, more than ${B.holderIdentity} in leases ${machine.leaseNamespace}/p1 (written by ${machine.poolletUserPrefix}p1)`)
    expect(await outcome(() => p1.createLease(machine, 'p1', lease('p1_0b6e0c5e-6a8f-4a57-9d0b-2f1f0c1a7d11')))).to.deep.equal({code: 200, message: 'ok'})
    const patched = await outcome(() => p1.patchLease(machine, 'p1', {holderIdentity: 'x'.repeat(HUGE)}))
    expect(patched.code).to.equal(422)
    expect(patched.message).to.include('spec.holderIdentity is 1450000 characters')
    expect((await admin.getLease(machine, 'p1'))?.spec?.holderIdentity).to.equal('p1_0b6e0c5e-6a8f-4a57-9d0b-2f1f0c1a7d11')
  })

  it(`admits a holderIdentity of exactly ${B.holderIdentity} characters and refuses ${B.holderIdentity + 1}`, async () => {
    const p1 = poollet.get(machine)!
    expect(await outcome(() => p1.patchLease(machine, 'p1', {holderIdentity: 'h'.repeat(B.holderIdentity)}))).to.deep.equal({code: 200, message: 'ok'})
    expect((await outcome(() => p1.patchLease(machine, 'p1', {holderIdentity: 'h'.repeat(B.holderIdentity + 1)}))).code).to.equal(422)
  })

  it(`refuses Lease annotations past ${B.leaseAnnotations} entries or ${B.leaseAnnotation} characters each (a poollet padding its Lease under the 256 KiB object bound); admits them at the bound, and an update that leaves an admin's large ones as they are`, async () => {
    const p1 = poollet.get(machine)!
    const annotations = (n: number, size: number) => Object.fromEntries(Array.from({length: n}, (_, i) => [`a${String(i).padStart(2, '0')}`, 'v'.repeat(size - 3)]))
    const patch = (body: object) => outcome(() => p1.mergePatchLease(machine, 'p1', body))
    const padded = await patch({metadata: {annotations: annotations(1, 200_000)}})
    expect(padded.code).to.equal(422)
    expect(padded.message).to.include(`each key and value together at most ${B.leaseAnnotation} characters`)
    expect((await patch({metadata: {annotations: annotations(B.leaseAnnotations + 1, 10)}})).code).to.equal(422)
    expect(await patch({metadata: {annotations: annotations(B.leaseAnnotations, B.leaseAnnotation)}})).to.deep.equal({code: 200, message: 'ok'})
    expect((await patch({metadata: {labels: Object.fromEntries(Array.from({length: B.leaseLabels + 1}, (_, i) => [`l${i}`, 'x']))}})).code).to.equal(422)
    // An admin's annotation past the bound: the poollet's renewals carry it unchanged and are admitted.
    await admin.mergePatchLease(machine, 'p1', {metadata: {annotations: {big: 'b'.repeat(10_000)}}})
    expect(await patch({spec: {renewTime: formatMicroTime(new Date())}})).to.deep.equal({code: 200, message: 'ok'})
  })

  it('leaves other users to RBAC: the admin may write a 1.45 MB holderIdentity (the policy does not evaluate it)', async () => {
    expect(await outcome(() => admin.createLease(machine, 'by-admin', lease('x'.repeat(HUGE))))).to.deep.equal({code: 200, message: 'ok'})
    await admin.deleteLease(machine, 'by-admin')
  })

  const cases: Array<{what: string; kind?: PoolKind; status: object; at: object; says: string}> = [
    {what: 'the Ready message', status: {conditions: [ready({message: 'm'.repeat(B.conditionMessage + 1)})]}, at: {conditions: [ready({message: 'm'.repeat(B.conditionMessage)})]}, says: `status.conditions[type=Ready].message is ${B.conditionMessage + 1} characters, more than ${B.conditionMessage}`},
    {what: 'the Ready reason', status: {conditions: [ready({reason: 'R'.repeat(B.conditionReason + 1)})]}, at: {conditions: [ready({reason: 'R'.repeat(B.conditionReason)})]}, says: `status.conditions[type=Ready].reason is ${B.conditionReason + 1} characters, more than ${B.conditionReason}`},
    {what: 'a condition type', status: {conditions: [ready(), ready({type: 'T'.repeat(B.conditionType + 1)})]}, at: {conditions: [ready(), ready({type: 'T'.repeat(B.conditionType)})]}, says: `].type is ${B.conditionType + 1} characters, more than ${B.conditionType}`},
    {what: 'the number of conditions', status: {conditions: Array.from({length: B.conditions + 1}, (_, i) => ready({type: `C${i}`}))}, at: {conditions: Array.from({length: B.conditions}, (_, i) => ready({type: `C${i}`}))}, says: `status.conditions has ${B.conditions + 1} entries, more than ${B.conditions}`},
    {what: 'a volume pool state', kind: volume, status: {state: 's'.repeat(B.state + 1)}, at: {state: 's'.repeat(B.state)}, says: `status.state is ${B.state + 1} characters, more than ${B.state}`},
    {what: 'the machine classes', status: {availableMachineClasses: Array.from({length: B.classes + 1}, (_, i) => ({name: `c${i}`}))}, at: {availableMachineClasses: Array.from({length: B.classes}, (_, i) => ({name: `c${i}`}))}, says: `status.availableMachineClasses has ${B.classes + 1} entries, more than ${B.classes}`},
    {what: 'a machine class name', status: {availableMachineClasses: [{name: 'n'.repeat(B.className + 1)}]}, at: {availableMachineClasses: [{name: 'n'.repeat(B.className)}]}, says: `a status.availableMachineClasses[].name is longer than ${B.className} characters`},
    {what: 'an address', status: {addresses: [{type: 'InternalIP', address: 'a'.repeat(B.address + 1)}]}, at: {addresses: [{type: 'InternalIP', address: 'a'.repeat(B.address)}]}, says: `a status.addresses[].address is longer than ${B.address} characters`},
    {what: 'the capacity', kind: volume, status: {capacity: Object.fromEntries(Array.from({length: B.resources + 1}, (_, i) => [`r${i}`, '1']))}, at: {capacity: Object.fromEntries(Array.from({length: B.resources}, (_, i) => [`r${i}`, '1']))}, says: `status.capacity has more than ${B.resources} resources`},
  ]
  for (const c of cases) {
    const kind = c.kind ?? machine
    const pool = kind === machine ? 'p1' : 'v1'
    it(`refuses ${c.what} past its bound in the poollet's own ${kind.name} pool status, naming the field; admits it at the bound`, async () => {
      const own = poollet.get(kind)!
      const refused = await outcome(() => own.patchStatus(kind, pool, c.status))
      expect(refused.code, refused.message).to.equal(422)
      expect(refused.message).to.include(c.says).and.include(`${kind.plural}/status ${pool} (written by ${kind.poolletUserPrefix}${pool})`)
      expect(await outcome(() => own.patchStatus(kind, pool, c.at))).to.deep.equal({code: 200, message: 'ok'})
    })
  }
})
