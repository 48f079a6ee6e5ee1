/** `ironpool pool status` as a real process against the real API server, pools created as admin. */
import {expect} from 'chai'
import {parse} from 'yaml'
import type {PoolView} from '../../../src/core/lifecycle/reading/pool-view.ts'
import {CliProcess, runCli} from '../../support/cli.ts'
import {waitFor} from '../../support/wait.ts'
import {agesBetween, createToolsWorld, tableRows, timed, type ToolsWorld} from './fixtures.ts'

describe('ironpool pool status', function () {
  this.timeout(60_000)
  let world: ToolsWorld
  let kubeconfig: string

  before(async function () {
    this.timeout(120_000)
    world = await createToolsWorld()
    kubeconfig = `--kubeconfig=${world.plane.adminKubeconfig}`
  })

  const status = (...args: string[]) => runCli(['pool', 'status', kubeconfig, ...args])

  it('shows a True, a False and an Unknown pool of each kind, field by field', async () => {
    const {result, window} = await timed(() => status('-l', world.selector))
    expect(result.code, result.stderr).to.equal(0)
    const [header, ...rows] = tableRows(result.stdout)
    expect(header).to.deep.equal(['NAME', 'KIND', 'READY', 'REASON', 'SINCE', 'HOLDER', 'RENEWED', 'LEASE', 'EXPIRED'])
    // Sorted by kind (the kinds table's order), then by name.
    expect(rows.map((r) => r[0])).to.deep.equal(world.pools.map((p) => p.name).sort((a, b) => kindOrder(a) - kindOrder(b) || a.localeCompare(b)))
    for (const pool of world.pools) {
      const row = rows.find((r) => r[0] === pool.name)
      expect(row, pool.name).to.not.equal(undefined)
      const [name, kind, ready, reason, since, holder, renewed, lease, expired] = row ?? []
      expect({name, kind, ready, reason, holder, expired}, pool.name).to.deep.equal({
        name: pool.name, kind: pool.kind.name, ready: pool.status, reason: pool.reason, holder: pool.holder, expired: pool.expired,
      })
      expect(since, `${pool.name} SINCE`).to.be.oneOf(agesBetween(pool.transitionAt, window))
      expect(renewed, `${pool.name} RENEWED`).to.be.oneOf(agesBetween(pool.renewedAt, window))
      expect(lease, `${pool.name} LEASE`).to.equal(pool.expired === 'yes' ? '40s' : '3600s')
    }
    expect(result.stdout).to.not.include('\u001b[')
  })

  it('prints the same views as JSON with --json and -o json, field by field', async () => {
    const {result: viaFlag, window} = await timed(() => status('-l', world.selector, '--json'))
    const viaOutput = await status('-l', world.selector, '-o', 'json')
    expect(viaFlag.code, viaFlag.stderr).to.equal(0)
    expect(viaOutput.code, viaOutput.stderr).to.equal(0)
    const flagPools = (JSON.parse(viaFlag.stdout) as {pools: PoolView[]}).pools
    const outputPools = (JSON.parse(viaOutput.stdout) as {pools: PoolView[]}).pools
    expect(outputPools.map((p) => p.name)).to.deep.equal(flagPools.map((p) => p.name))
    expect(flagPools).to.have.length(9)
    for (const pool of world.pools) {
      const view = flagPools.find((v) => v.name === pool.name)
      expect(view, pool.name).to.deep.include({
        kind: pool.kind.name,
        ready: pool.status,
        reason: pool.reason,
        message: pool.message,
        holder: pool.holder,
        leaseDurationSeconds: pool.expired === 'yes' ? 40 : 3600,
        lease: pool.expired === 'yes' ? 'expired' : 'valid',
        skew: [],
      })
      expect(view?.sinceMs).to.be.within(window.from - pool.transitionAt, window.to - pool.transitionAt)
      expect(Date.parse(view?.expiresAt ?? '')).to.equal(Date.parse(view?.renewTime ?? '') + (view?.leaseDurationSeconds ?? 0) * 1000)
    }
  })

  it('prints YAML with -o yaml', async () => {
    const result = await status('-l', world.selector, '--kind=volume', '-o', 'yaml')
    expect(result.code, result.stderr).to.equal(0)
    const views = (parse(result.stdout) as {pools: PoolView[]}).pools
    expect(views.map((v) => [v.kind, v.ready])).to.deep.equal([['volume', 'False'], ['volume', 'True'], ['volume', 'Unknown']])
  })

  it('adds MESSAGE with -o wide, and leaves the header out with --no-headers', async () => {
    const wide = await status('-l', world.selector, '--kind=bucket', '-o', 'wide', '--no-headers')
    expect(wide.code, wide.stderr).to.equal(0)
    const rows = tableRows(wide.stdout)
    expect(rows).to.have.length(3)
    const unknown = world.pools.find((p) => p.kind.name === 'bucket' && p.status === 'Unknown')
    expect(rows.find((r) => r[0] === unknown?.name)?.slice(9)).to.deep.equal([unknown?.message, '<none>'])
  })

  it('shows only the named pools, and says which name it did not find (exit 1)', async () => {
    const [first] = world.pools
    const result = await status(first?.name ?? '', 'tools-no-such-pool')
    expect(result.code).to.equal(1)
    expect(tableRows(result.stdout).slice(1).map((r) => r[0])).to.deep.equal([first?.name])
    expect(result.stderr.trim()).to.equal('error: pool tools-no-such-pool not found among machinepools, volumepools, bucketpools')
  })

  it('exits 0 with --fail-on-not-ready when every listed pool is Ready=True, 1 otherwise', async () => {
    const allTrue = await status('-l', `${world.selector},tools-ready=True`, '--fail-on-not-ready')
    expect(allTrue.code, allTrue.stderr).to.equal(0)
    expect(tableRows(allTrue.stdout)).to.have.length(4)
    const mixed = await status('-l', world.selector, '--fail-on-not-ready')
    expect(mixed.code).to.equal(1)
    expect(tableRows(mixed.stdout)).to.have.length(10)
  })

  it('marks a renewTime in the future and explains it on stderr', async () => {
    const pool = world.pools.find((p) => p.kind.name === 'machine' && p.status === 'True')
    if (pool === undefined) throw new Error('no machine pool')
    const future = new Date(Date.now() + 10 * 60_000).toISOString().replace('Z', '000Z')
    await world.plane.kubectl(['-n', pool.kind.leaseNamespace, 'patch', 'lease', pool.name, '--type=merge', '-p', JSON.stringify({spec: {renewTime: future}})])
    const result = await status(pool.name, '--kind=machine')
    expect(result.code, result.stderr).to.equal(0)
    expect(tableRows(result.stdout)[1]?.[6]).to.equal('0s!')
    expect(result.stderr).to.include(`! machinepool ${pool.name}: Lease renewTime ${future} is in the future: the clocks look skewed`)
  })

  it('follows changes with --watch: a new row when a pool turns False, until SIGINT', async () => {
    const pool = world.pools.find((p) => p.kind.name === 'volume' && p.status === 'True')
    if (pool === undefined) throw new Error('no volume pool')
    const watch = new CliProcess(['pool', 'status', kubeconfig, '--watch', pool.name])
    try {
      const first = await waitFor('the first table', () => watch.stdout.find((line) => line.startsWith(pool.name)))
      expect(first.split(/ {3,}/)[2]).to.equal('True')
      const at = new Date().toISOString()
      await world.admin.setConditions(pool.kind, pool.name, [{type: 'Ready', status: 'False', reason: 'RuntimeUnreachable', message: 'probe failed', lastUpdateTime: at, lastTransitionTime: at}])
      const changed = await waitFor('a row saying False', () => watch.stdout.find((line) => line.startsWith(pool.name) && line.split(/ {3,}/)[2] === 'False'))
      expect(changed.split(/ {3,}/).slice(0, 4)).to.deep.equal([pool.name, 'volume', 'False', 'RuntimeUnreachable'])
      // The row is under the first table's columns.
      expect(changed.indexOf('RuntimeUnreachable')).to.equal(watch.stdout[0]?.indexOf('REASON'))
    } finally {
      let exit: {code: number | null} | undefined
      void watch.stop('SIGINT').then((e) => (exit = e))
      await waitFor('the watch to end after SIGINT', () => exit, {timeoutMs: 10_000})
      expect(exit?.code).to.equal(0)
    }
  })
})

function kindOrder(name: string): number {
  return ['m', 'v', 'b'].indexOf(name.split('-')[2] ?? '')
}
