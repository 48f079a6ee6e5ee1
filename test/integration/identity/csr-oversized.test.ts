import {expect} from 'chai'
import {readFile} from 'node:fs/promises'
import type {ControlPlane, Identity} from '../../../src/controlplane/control-plane.ts'
import {poolletCsrTemplate} from '../../../src/core/identity/poollet-csr.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {DEFAULT_CSR_TIMEOUT_MS} from '../../../src/kube/identity/poollet-identity.ts'
import {REQUEST_MAX_BYTES} from '../../../src/kube/identity/csr-approver.ts'
import {generateCsr} from '../../../src/kube/identity/x509.ts'
import {startController, type ControllerProcess} from '../../support/controller-env.ts'
import {approved, bootstrapToken, identityPlane, listCsrs, readCsr, submitCsr} from '../../support/identity-env.ts'
import {KubeObjects} from '../../support/kube-objects.ts'
import {waitFor} from '../../support/wait.ts'

const machine = POOL_KINDS.machine
const PADDED = 17
/** Text after the PEM block, which kube-apiserver ignores (it reads the first block): the review's 1.48 MB. */
const PADDING_BYTES = 1_480_000
const NOT_APPROVED = 'poollet certificate signing request not approved'

/** The process's resident set now and at its peak (VmRSS, VmHWM), in MiB. */
async function memoryMiB(pid: number): Promise<{rss: number; peak: number}> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return {rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024}
}

async function readyz(controller: ControllerProcess): Promise<{status: number; body: string}> {
  const line = await controller.waitForLog('serving health-probes')
  const answer = await fetch(`http://${String(line.address)}/readyz?verbose`)
  return {status: answer.status, body: await answer.text()}
}

/**
 * The review's second denial of service on the real kube-apiserver: 17 CSRs of the client signer, each
 * a small valid request followed by 1.48 MB of text, 33 MB as one list of JSON (base64). Before issue
 * 29 an approver that (re)started after them never synced and never approved, with /readyz 200. Now it
 * lists 4 CSRs a page and drops each oversized request before caching it: after a restart a waiting
 * legitimate CSR is approved, every padded one is refused naming its size, and /readyz says the cache is whole.
 */
describe('controller --approve-poollet-csrs: 17 CSRs of 1.48 MB each stall no approval', function () {
  this.timeout(240_000)
  let plane: ControlPlane
  let controller: ControllerProcess | undefined
  let flooder: Identity
  let other: Identity
  const padded: string[] = []

  before(async () => {
    ;({plane} = await identityPlane())
    await new KubeObjects(plane.adminKubeconfig).createPool(machine, 'p1')
    flooder = await bootstrapToken(plane, machine)
    other = await bootstrapToken(plane, machine)
    controller = await startController(plane, ['--approve-poollet-csrs'])
    await controller.waitForLog('approving poollet client certificates')
    const before = await memoryMiB(controller.child.pid!)
    console.log(`      the approver before the padded CSRs: ${before.rss.toFixed(1)} MiB resident, peak ${before.peak.toFixed(1)} MiB`)
    const small = (await generateCsr(poolletCsrTemplate(machine, 'p1'))).csrPem
    for (let i = 0; i < PADDED; i++) padded.push(await submitCsr(flooder.kubeconfig, {pem: small + 'x'.repeat(PADDING_BYTES), name: `padded-${String(i).padStart(2, '0')}`}))
  })
  after(async () => {
    await controller?.stop()
    await plane?.stop()
  })

  it('the running approver refuses each padded CSR, naming its size, and approves none', async () => {
    await waitFor('every padded CSR refused', () => controller!.logs().filter((l) => l.msg === NOT_APPROVED && String(l.csr).startsWith('padded-')).length === PADDED, {timeoutMs: 60_000, intervalMs: 200})
    const lines = controller!.logs().filter((l) => l.msg === NOT_APPROVED && String(l.csr).startsWith('padded-'))
    expect(new Set(lines.map((l) => l.rule))).to.deep.equal(new Set(['encoding']))
    expect(lines.every((l) => String(l.message).includes(`more than the ${REQUEST_MAX_BYTES} a poollet's request can need`))).to.be.true
    const csrs = (await listCsrs(plane)).filter((c) => padded.includes(c.metadata?.name ?? ''))
    expect(csrs).to.have.length(PADDED)
    expect(csrs.filter(approved)).to.deep.equal([])
    const pid = controller!.child.pid!
    const memory = await memoryMiB(pid)
    console.log(`      the running approver, ${PADDED} padded CSRs refused: ${memory.rss.toFixed(1)} MiB resident, peak ${memory.peak.toFixed(1)} MiB`)
  })

  it('after a restart, a waiting legitimate CSR is approved; /readyz reports the CSR cache whole; memory figures printed', async () => {
    await controller!.stop()
    const legit = await submitCsr(other.kubeconfig, {pem: (await generateCsr(poolletCsrTemplate(machine, 'p1'))).csrPem, name: 'zz-legit'})
    const bytes = JSON.stringify(await listCsrs(plane)).length
    controller = await startController(plane, ['--approve-poollet-csrs'])
    await waitFor('the legitimate CSR approved', async () => approved(await readCsr(plane, legit)), {timeoutMs: DEFAULT_CSR_TIMEOUT_MS, intervalMs: 200})
    const probe = await readyz(controller)
    expect(probe.body).to.include('[+]csr-cache ok')
    expect(await controller.metric('ironpool_controller_csr_cache_whole')).to.equal(1)
    const memory = await memoryMiB(controller.child.pid!)
    console.log(`      restarted approver: all CSRs as JSON ${(bytes / 1024 / 1024).toFixed(1)} MiB; approver after approving: ${memory.rss.toFixed(1)} MiB resident, peak ${memory.peak.toFixed(1)} MiB`)
    expect(controller.logs().some((l) => l.msg === 'could not approve')).to.be.false
  })
})
