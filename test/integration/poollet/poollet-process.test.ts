/** `ironpool poollet` refusing bad input before it starts, and stopping cleanly. */
import {expect} from 'chai'
import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {pathToFileURL} from 'node:url'
import {IRONPOOL_BIN, ironpoolNodeFlags} from '../../../src/cli/ironpool-process.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {CliProcess, runCli} from '../../support/cli.ts'
import {KubeObjects} from '../../support/kube-objects.ts'
import {FAST, poolletControlPlane, startPoollet} from '../../support/poollet-env.ts'
import {waitFor} from '../../support/wait.ts'

describe('ironpool poollet: flags and signals', function () {
  this.timeout(60_000)

  const refusals: [string, string[], string][] = [
    ['a zero interval', ['--heartbeat-interval=0s'], '--heartbeat-interval'],
    ['a lease duration not above the interval', ['--heartbeat-interval=10s', '--heartbeat-lease-duration=10s'], '--heartbeat-lease-duration'],
    ['a status timeout not below the interval', ['--heartbeat-interval=1s', '--heartbeat-status-timeout=1s'], '--heartbeat-status-timeout'],
    ['an unparsable duration', ['--heartbeat-interval=soon'], 'soon'],
    ['an unknown kind', ['--kind=network'], 'machine, volume, bucket'],
    ['a missing pool name', [], 'pool-name'],
  ]
  for (const [what, args, mention] of refusals) {
    it(`exits 2 naming the rule for ${what}`, async () => {
      const withPool = what === 'a missing pool name' ? args : ['--pool-name=p1', ...args]
      const result = await runCli(['poollet', ...withPool])
      expect(result.code, result.stderr).to.equal(2)
      // oclif wraps its error lines behind a '›' margin.
      expect(result.stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ')).to.include(mention)
    })
  }

  it('takes flags from IRONPOOL_ environment variables', async () => {
    const result = await runCli(['poollet', '--pool-name=p1'], {IRONPOOL_HEARTBEAT_INTERVAL: '0s'})
    expect(result.code).to.equal(2)
    expect(result.stderr).to.include('--heartbeat-interval')
  })

  it('exits 0 on SIGTERM', async () => {
    const plane = await poolletControlPlane()
    const kind = POOL_KINDS.machine
    const admin = new KubeObjects(plane.adminKubeconfig)
    await admin.createPool(kind, 'pl-sigterm')
    const fixture = await startPoollet(plane, kind, 'pl-sigterm')
    try {
      await waitFor('the first heartbeat', () => admin.getLease(kind, 'pl-sigterm'))
      fixture.poollet.child.kill('SIGTERM')
      let exit: {code: number | null} | undefined
      void fixture.poollet.exited.then((e) => (exit = e))
      // "Within a couple of seconds": a deadline on the exit, not a timing measurement.
      await waitFor('the poollet to exit after SIGTERM', () => exit, {timeoutMs: 15_000})
      expect(exit?.code).to.equal(0)
    } finally {
      await fixture.stop()
    }
  })
})

describe('ironpool poollet: what it cannot reach', function () {
  this.timeout(60_000)

  it('gives up on runtime discovery with an error naming every socket path it waited for', async () => {
    const plane = await poolletControlPlane()
    const identity = await plane.userIdentity(`${POOL_KINDS.volume.poolletUserPrefix}nowhere`, [POOL_KINDS.volume.poolletGroup])
    const result = await runCli(['poollet', '--pool-name=nowhere', '--kind=volume', '--runtime-socket-discovery-timeout=1s', `--kubeconfig=${identity.kubeconfig}`, '--log-format=json'])
    expect(result.code).to.equal(1)
    for (const socket of POOL_KINDS.volume.wellKnownSockets) expect(result.stderr).to.include(socket)
  })

  it('runs under the Node flags of bin/run.js’s shebang (a capped young generation, no memory reducer), started by the shebang itself or by the tests', async () => {
    const plane = await poolletControlPlane()
    const identity = await plane.userIdentity(`${POOL_KINDS.volume.poolletUserPrefix}flags`, [POOL_KINDS.volume.poolletGroup])
    // Waiting for a runtime socket that never comes keeps the process alive long enough to look at it.
    const args = ['poollet', '--pool-name=flags', '--kind=volume', '--runtime-socket-discovery-timeout=30s', `--kubeconfig=${identity.kubeconfig}`, '--log-format=json']
    const flags = ironpoolNodeFlags()
    expect(flags.some((flag) => flag.startsWith('--max-semi-space-size='))).to.be.true
    expect(flags).to.include('--no-memory-reducer')
    /** The process's argv as the kernel has it, once env has handed over to node. */
    const nodeArgv = (pid: number) =>
      waitFor('node running bin/run.js', () => {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((arg) => arg !== '')
        return argv.includes(IRONPOOL_BIN) && path.basename(argv[0] ?? '') === 'node' ? argv : undefined
      })
    // As npm's bin link and the image's ENTRYPOINT start it: the file itself, node found on PATH.
    const direct = spawn(IRONPOOL_BIN, args, {env: {...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`}, stdio: 'ignore'})
    const started = new CliProcess(args)
    try {
      for (const pid of [direct.pid!, started.child.pid!]) {
        const argv = await nodeArgv(pid)
        expect(argv.slice(1, argv.indexOf(IRONPOOL_BIN)), `argv of ${pid}`).to.deep.equal(flags)
      }
    } finally {
      direct.kill('SIGTERM')
      await started.stop()
    }
  })

  it("runs without V8's optimizing compilers from its start, where another command has them (bin/run.js)", async () => {
    const plane = await poolletControlPlane()
    const identity = await plane.userIdentity(`${POOL_KINDS.volume.poolletUserPrefix}tiers`, [POOL_KINDS.volume.poolletGroup])
    // Loaded before bin/run.js by --import; once bin/run.js has run, makes a function hot (a count of
    // calls, compiled synchronously) and prints V8's optimization status of it.
    const dir = mkdtempSync(path.join(tmpdir(), 'ironpool-tiers-'))
    const probe = path.join(dir, 'tiers-probe.mjs')
    writeFileSync(
      probe,
      `function hot(values) { let sum = 0; for (let i = 0; i < values.length; i++) sum += values[i] * 2; return sum }
      setTimeout(() => {
        const values = Array.from({length: 100}, (_, i) => i)
        for (let i = 0; i < 20000; i++) hot(values)
        process.stderr.write('tiers-probe ' + %GetOptimizationStatus(hot) + '\\n')
      }, 0)\n`,
    )
    const nodeFlags = [...ironpoolNodeFlags(), '--allow-natives-syntax', '--no-concurrent-recompilation', `--import=${pathToFileURL(probe).href}`]
    /** V8's %GetOptimizationStatus bit for "has optimized code" (Maglev or TurboFan). */
    const OPTIMIZED = 1 << 4
    const status = async (cli: CliProcess) => Number((await waitFor('the probe', () => cli.stderr.find((line) => line.startsWith('tiers-probe ')))).split(' ')[1])
    // Waiting for a runtime socket that never comes keeps the poollet alive.
    const poollet = new CliProcess(['poollet', '--pool-name=tiers', '--kind=volume', '--runtime-socket-discovery-timeout=30s', `--kubeconfig=${identity.kubeconfig}`, '--log-format=json'], {}, nodeFlags)
    const other = new CliProcess(['version'], {}, nodeFlags)
    try {
      expect((await status(poollet)) & OPTIMIZED, 'in the poollet').to.equal(0)
      expect((await status(other)) & OPTIMIZED, 'in `ironpool version`').to.equal(OPTIMIZED)
    } finally {
      await poollet.stop()
      await other.stop()
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('logs "pool p not found" each tick for a missing pool and still renews its Lease', async () => {
    const plane = await poolletControlPlane()
    const kind = POOL_KINDS.bucket
    const admin = new KubeObjects(plane.adminKubeconfig)
    const fixture = await startPoollet(plane, kind, 'pl-missing')
    try {
      const first = await waitFor('the Lease', () => admin.getLease(kind, 'pl-missing'))
      await waitFor('the Lease renewed', async () => String((await admin.getLease(kind, 'pl-missing'))?.spec?.renewTime) !== String(first.spec?.renewTime))
      await waitFor('three "not found" errors', () => fixture.poollet.logs().filter((l) => l.level === 'error' && l.msg === 'pool pl-missing not found').length >= 3)
    } finally {
      await fixture.stop()
    }
  })

  it('logs the verb and resource refused (403) and keeps trying, without crashing', async () => {
    const plane = await poolletControlPlane()
    const kind = POOL_KINDS.machine
    const admin = new KubeObjects(plane.adminKubeconfig)
    await admin.createPool(kind, 'pl-refused')
    // An identity outside the poollet group: deploy/'s RBAC grants it nothing.
    const stranger = await plane.userIdentity('stranger')
    const fixture = await startPoollet(plane, kind, 'pl-refused', FAST, stranger.kubeconfig)
    try {
      await waitFor('two refused Lease writes', () => fixture.poollet.logs().filter((l) => String(l.msg).includes('lease ironcore-machinepool-lease/pl-refused') && String(l.msg).includes('forbidden (403)')).length >= 2)
      expect(fixture.poollet.child.exitCode).to.equal(null)
    } finally {
      await fixture.stop()
    }
  })
})
