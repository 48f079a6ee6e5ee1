import {expect} from 'chai'
import {readFileSync} from 'node:fs'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import type {ControlPlane, Identity} from '../../../src/controlplane/control-plane.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {startTestRuntime, type TestRuntime} from '../../../src/iri/test-runtime.ts'
import {CliProcess} from '../../support/cli.ts'
import {bootstrapToken, identityPlane, listCsrs} from '../../support/identity-env.ts'
import {waitFor} from '../../support/wait.ts'

const machine = POOL_KINDS.machine

const errors = (poollet: CliProcess) => poollet.logs().filter((l) => l.level === 50 || l.level === 'error')
// The messages, so that a failed count says which error was the extra one.
const errorMessages = (poollet: CliProcess) => errors(poollet).map((l) => String(l.msg))

describe('poollet bootstrap failures: one clear error and a retry, never a crash loop (real CSR signer)', function () {
  this.timeout(180_000)
  let plane: ControlPlane
  let token: Identity
  let dir: string
  let runtime: TestRuntime
  const poollets: CliProcess[] = []

  const start = (pool: string, bootstrapKubeconfig: string, extra: readonly string[] = []) => {
    const poollet = new CliProcess([
      'poollet',
      `--pool-name=${pool}`,
      `--kind=${machine.name}`,
      `--runtime-endpoint=${runtime.endpoint}`,
      `--bootstrap-kubeconfig=${bootstrapKubeconfig}`,
      `--kubeconfig=${path.join(dir, `${pool}.kubeconfig`)}`,
      '--heartbeat-interval=1s',
      '--heartbeat-status-timeout=500ms',
      '--log-format=json',
      '--log-level=debug',
      ...extra,
    ])
    poollets.push(poollet)
    return poollet
  }

  before(async function () {
    // No approver: the test decides each CSR itself.
    ;({plane} = await identityPlane({signingDurationSeconds: 600, hook: this}))
    token = await bootstrapToken(plane, machine)
    dir = await mkdtemp(path.join(tmpdir(), 'ironpool-bootstrap-'))
    runtime = await startTestRuntime({kind: machine, socketPath: path.join(dir, 'runtime.sock')})
  })
  after(async () => {
    for (const poollet of poollets) await poollet.stop()
    await runtime?.stop()
    await plane?.stop()
    if (dir) await rm(dir, {recursive: true, force: true})
  })

  it('a denied CSR: one error naming the CSR and the denial, then a new CSR, which once approved is used', async () => {
    // The pool exists, so that the only error a working poollet could log is the denial's.
    await plane.kubectlApply({apiVersion: `${machine.group}/${machine.version}`, kind: machine.kind, metadata: {name: 'd1'}})
    const poollet = start('d1', token.kubeconfig)
    const mine = async () => (await listCsrs(plane)).filter((csr) => csr.spec.username === token.username).map((csr) => csr.metadata?.name ?? '')
    const [first] = await waitFor('the first CSR', async () => ((await mine()).length === 1 ? await mine() : undefined), {timeoutMs: 60_000, intervalMs: 200})
    await plane.kubectl(['certificate', 'deny', first ?? ''])
    const error = await waitFor('the error', () => errors(poollet)[0], {timeoutMs: 30_000})
    expect(String(error.msg)).to.include(`certificate signing request ${first} was denied`)
    const second = await waitFor('a second CSR', async () => (await mine()).find((name) => name !== first), {timeoutMs: 60_000, intervalMs: 200})
    expect(errorMessages(poollet), 'one error for one denial').to.have.length(1)
    await plane.kubectl(['certificate', 'approve', second])
    await poollet.waitForLog('client certificate issued and stored', {}, 60_000)
    await poollet.waitForLog('poollet starting', {}, 30_000)
    // Used: deploy/policies admit a pool's status only from the pool's own user, not the bootstrap token.
    const ready = () => plane.kubectl(['get', machine.plural, 'd1', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'])
    await waitFor('d1 Ready=True, written with the issued certificate', async () => (await ready()).trim() === 'True', {timeoutMs: 30_000, intervalMs: 200})
    expect(poollet.child.exitCode, 'still running').to.equal(null)
    expect(errorMessages(poollet)).to.have.length(1)
  })

  it('a CSR nobody approves within --certificate-request-timeout: a clear error saying what to check, then a new CSR', async () => {
    const poollet = start('t1', token.kubeconfig, ['--certificate-request-timeout=2s'])
    const error = await waitFor('the timeout error', () => errors(poollet)[0], {timeoutMs: 60_000})
    expect(String(error.msg)).to.match(/certificate signing request \S+ was not approved within 2s: is an approver running/)
    await waitFor('a second error after a retry', () => errors(poollet).length >= 2, {timeoutMs: 60_000})
    expect(poollet.child.exitCode, 'still running').to.equal(null)
  })

  it('a bootstrap token the API server refuses: a clear error per attempt, retried, the process alive', async () => {
    const refused = path.join(dir, 'refused.kubeconfig')
    const kc = readFileSync(token.kubeconfig, 'utf8')
    // The same kubeconfig with a token that no Secret backs.
    await writeFile(refused, kc.replace(/token: .*/, 'token: abcdef.0123456789abcdef'))
    const poollet = start('r1', refused)
    await waitFor('two refusals', () => errors(poollet).length >= 2, {timeoutMs: 60_000})
    for (const line of errors(poollet)) expect(String(line.msg)).to.include(`the bootstrap kubeconfig ${refused} was not accepted by the API server (401 Unauthorized)`)
    expect(poollet.child.exitCode, 'still running').to.equal(null)
  })
})
