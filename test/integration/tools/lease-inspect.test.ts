/** `ironpool lease inspect` as a real process against the real API server. */
import {V1MicroTime} from '@kubernetes/client-node'
import {expect} from 'chai'
import type {LeaseInspection} from '../../../src/cli/report/lease-inspection.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {runCli} from '../../support/cli.ts'
import {agesBetween, createToolsWorld, timed, type ToolsWorld} from './fixtures.ts'

/** "Label:   value" lines as a map. */
function fields(stdout: string): Record<string, string> {
  const pairs = stdout.split('\n').flatMap((line): [string, string][] => {
    const match = /^([A-Za-z]+):\s+(.*)$/.exec(line)
    return match?.[1] !== undefined && match[2] !== undefined ? [[match[1], match[2]]] : []
  })
  return Object.fromEntries(pairs)
}

describe('ironpool lease inspect', function () {
  this.timeout(60_000)
  let world: ToolsWorld
  let kubeconfig: string

  before(async function () {
    this.timeout(120_000)
    world = await createToolsWorld()
    kubeconfig = `--kubeconfig=${world.plane.adminKubeconfig}`
  })

  const inspect = (...args: string[]) => runCli(['lease', 'inspect', kubeconfig, ...args])
  const pool = (kind: string, status: string) => {
    const found = world.pools.find((p) => p.kind.name === kind && p.status === status)
    if (found === undefined) throw new Error(`no ${kind} ${status} pool`)
    return found
  }

  it("shows an existing Lease beside the pool's Ready condition", async () => {
    const p = pool('volume', 'True')
    const lease = await world.admin.getLease(p.kind, p.name)
    const {result, window} = await timed(() => inspect(p.name, '--kind=volume'))
    expect(result.code, result.stderr).to.equal(0)
    expect(result.stderr).to.equal('')
    const f = fields(result.stdout)
    expect(f.Lease).to.equal(`ironcore-volumepool-lease/${p.name}`)
    expect(f.Holder).to.equal(p.holder)
    expect(f.Acquired).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    expect(f.Renewed).to.match(/^\S+\.\d{6}Z \(\w+ ago\)$/)
    expect(/\((\w+) ago\)$/.exec(f.Renewed ?? '')?.[1]).to.be.oneOf(agesBetween(p.renewedAt, window))
    expect(f.Duration).to.equal('3600s')
    expect(/ \(in (\w+); not expired\)$/.exec(f.Expires ?? '')?.[1]).to.be.oneOf(agesBetween(p.expiresAt, window, 'until'))
    expect(f.Transitions).to.equal('1')
    expect(f.ResourceVersion).to.equal(lease?.metadata?.resourceVersion)
    expect(f.Pool).to.equal(`volumepool ${p.name}`)
    const ready = /^True \(HeartbeatReceived, since (\w+)\): (.*)$/.exec(f.Ready ?? '')
    expect(ready?.[2], f.Ready).to.equal(p.message)
    expect(ready?.[1], f.Ready).to.be.oneOf(agesBetween(p.transitionAt, window))
    expect(result.stdout).to.not.include('Problems:')
  })

  it('says when a Lease has expired, with --kind=bucket', async () => {
    const p = pool('bucket', 'Unknown')
    const result = await inspect(p.name, '--kind=bucket')
    expect(result.code, result.stderr).to.equal(0)
    const f = fields(result.stdout)
    expect(f.Expires).to.match(/ \(expired 9m(\d+s)? ago\)$/)
    expect(f.Ready).to.include(`Unknown (${POOL_KINDS.bucket.unknownReason}`)
    expect(result.stdout).to.include(`  - Lease ironcore-bucketpool-lease/${p.name} expired at`)
  })

  it('prints the inspection as JSON', async () => {
    const p = pool('machine', 'False')
    const result = await inspect(p.name, '--json')
    expect(result.code, result.stderr).to.equal(0)
    const json = JSON.parse(result.stdout) as LeaseInspection
    expect(json).to.deep.include({kind: 'machine', name: p.name, problems: [], missing: false})
    expect(json.pool).to.deep.include({exists: true, ready: 'False', reason: 'RuntimeUnreachable', message: p.message})
    expect(json.lease).to.deep.include({exists: true, namespace: 'ironcore-machinepool-lease', holder: p.holder, holderMatchesPool: true, leaseDurationSeconds: 3600, state: 'valid', transitions: 1})
  })

  it('says plainly when the Lease does not exist (exit 1)', async () => {
    const name = `${world.pools[0]?.name ?? 'tools-x'}-nolease`
    await world.admin.createPool(POOL_KINDS.machine, name)
    const result = await inspect(name)
    expect(result.code).to.equal(1)
    expect(fields(result.stdout).Lease).to.equal(`ironcore-machinepool-lease/${name} does not exist`)
    expect(result.stderr.trim()).to.equal(`error: Lease ironcore-machinepool-lease/${name} does not exist: no poollet has heartbeated for this pool`)
  })

  it('says plainly when the pool does not exist (exit 1)', async () => {
    const result = await inspect('tools-no-such-pool', '--kind=volume')
    expect(result.code).to.equal(1)
    expect(result.stdout).to.equal('')
    expect(result.stderr.trim()).to.equal(
      'error: volumepool tools-no-such-pool does not exist (kubectl get volumepools; check the name and --kind); and Lease ironcore-volumepool-lease/tools-no-such-pool does not exist: no poollet has heartbeated for this pool',
    )
  })

  it('says plainly when the holder is not the pool', async () => {
    const p = pool('machine', 'True')
    const name = `${p.name}-stolen`
    await world.admin.createPool(p.kind, name)
    await world.admin.createLease(p.kind, name, {holderIdentity: `${p.name}_1234`, leaseDurationSeconds: 40, renewTime: new V1MicroTime()})
    const result = await inspect(name)
    expect(result.code, result.stderr).to.equal(0)
    expect(fields(result.stdout).Holder).to.equal(`${p.name}_1234  (does not match the pool!)`)
    expect(result.stdout).to.include(`  - holder ${p.name}_1234 does not match pool ${name}: a poollet holds its pool's Lease as ${name}_<uuid>`)
    const json = JSON.parse((await inspect(name, '--json')).stdout) as LeaseInspection
    expect(json.lease).to.deep.include({holderMatchesPool: false})
  })
})
