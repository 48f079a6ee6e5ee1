/**
 * `ironpool sandbox` as a real process: its own control plane, controller and poollets, driven by a
 * --script and read through its plain state lines. Teardown is checked from outside: every process
 * group the sandbox reported is gone, and so is its temporary folder (sockets, logs, kubeconfigs).
 */
import {expect} from 'chai'
import {waitFor} from '../../support/wait.ts'
import {dirGone, groupGone, SandboxRun} from './sandbox-run.ts'

/** A cold start on a busy 2-core machine: node, oclif, etcd, kube-apiserver and three poollets. */
const START_MS = 120_000

const SCRIPT = `
# each wait gives up after 60s, and the sandbox then exits 1
wait-ready 3
freeze machine-1
wait machine-1 Unknown
+500ms thaw machine-1
wait machine-1 True
fail volume-1
wait volume-1 False
recover volume-1
wait volume-1 True
quit
`

describe('ironpool sandbox (real process, --script)', function () {
  this.timeout(240_000)
  let run: SandboxRun

  before(async () => {
    run = await SandboxRun.start(['--pools=3', '--grace-period=4s', '--heartbeat-interval=1s'], SCRIPT)
  })

  after(async () => {
    await run?.dispose()
  })

  it('starts one pool of each kind, and all three become Ready=True', async () => {
    const ready = await Promise.all(
      ['machine-1', 'volume-1', 'bucket-1'].map((pool) => run.waitForLine(new RegExp(`^${pool} Ready=True HeartbeatReceived$`), {timeoutMs: START_MS})),
    )
    const all = await run.waitForLine(/^all 3 pools Ready=True/)
    const spawnToReady = Date.now() - run.spawnedAt
    console.log(`      sandbox start to all 3 pools Ready: ${all.seconds.toFixed(2)}s on the sandbox's clock, ${(spawnToReady / 1000).toFixed(2)}s from spawn`)
    expect(ready.every((line) => line.seconds <= all.seconds)).to.be.true
    expect(run.processGroups().map((g) => g.name)).to.include.members(['controller', 'poollet-machine-1', 'poollet-volume-1', 'poollet-bucket-1'])
  })

  it("turns a frozen poollet's pool Unknown after the grace period, and True again after thaw", async () => {
    const freeze = await run.waitForLine(/^script: freeze machine-1$/)
    const unknown = await run.waitForLine(/^machine-1 Ready=Unknown MachinePoolStatusUnknown$/, {after: freeze.index})
    const thaw = await run.waitForLine(/^script: \+500ms thaw machine-1$/)
    // The timed step runs after the wait before it has ended: order, not the printed (rounded) 500ms,
    // which a busy machine can shave below what was asked once both stamps are rounded.
    expect(thaw.index, 'thaw printed after the Unknown it waited for').to.be.above(unknown.index)
    await run.waitForLine(/^machine-1 Ready=True HeartbeatReceived$/, {after: thaw.index})
    console.log(`      freeze to Unknown: ${(unknown.seconds - freeze.seconds).toFixed(2)}s (grace period 4s, counted from the last renewal)`)
    // Only machine-1 was frozen: the others never left True meanwhile.
    const others = run.lines().filter((l) => l.index > freeze.index && l.index < thaw.index && /^(volume|bucket)-1 Ready=(?!True)/.test(l.text))
    expect(others).to.deep.equal([])
  })

  it('turns a pool with a failing runtime False/RuntimeUnreachable, and True once it recovers', async () => {
    const fail = await run.waitForLine(/^script: fail volume-1$/)
    const falseLine = await run.waitForLine(/^volume-1 Ready=False RuntimeUnreachable$/, {after: fail.index})
    const recover = await run.waitForLine(/^script: recover volume-1$/, {after: falseLine.index})
    await run.waitForLine(/^volume-1 Ready=True HeartbeatReceived$/, {after: recover.index})
  })

  it('ends with the script (quit) and leaves no process group and no temporary folder behind', async () => {
    await run.waitForLine(/^script: quit$/)
    const {code} = await run.cli.exited
    expect(code).to.equal(0)
    const groups = run.processGroups()
    expect(groups).to.have.length(6) // etcd, kube-apiserver, controller, three poollets
    expect(groups.filter((g) => !groupGone(g.pid))).to.deep.equal([])
    expect(dirGone(run.tempDir()), `temporary folder ${run.tempDir()}`).to.be.true
    expect(run.lines().at(-1)?.text).to.match(/^stopped: 6 of 6 process groups ended; \S+ removed$/)
  })
})

describe('ironpool sandbox teardown from outside', function () {
  this.timeout(240_000)
  let run: SandboxRun | undefined

  afterEach(async () => {
    await run?.dispose()
    run = undefined
  })

  // Without --script and without a terminal the sandbox prints plain lines until a signal, as in a pipe.
  it('tears everything down on SIGTERM and exits 0', async () => {
    run = await SandboxRun.start(['--pools=1', '--kinds=machine'])
    await run.waitForLine(/^all 1 pools Ready=True/, {timeoutMs: START_MS})
    const groups = run.processGroups()
    const {code} = await run.cli.stop('SIGTERM')
    expect(code).to.equal(0)
    expect(groups.filter((g) => !groupGone(g.pid))).to.deep.equal([])
    expect(dirGone(run.tempDir())).to.be.true
  })

  it("leaves nothing behind when the sandbox itself is killed (SIGKILL): the control plane's reaper ends its groups", async () => {
    run = await SandboxRun.start(['--pools=1', '--kinds=bucket'])
    await run.waitForLine(/^all 1 pools Ready=True/, {timeoutMs: START_MS})
    const groups = run.processGroups()
    expect(groups.map((g) => g.name)).to.include.members(['controller', 'poollet-bucket-1'])
    await run.cli.stop('SIGKILL')
    await waitFor('every process group gone', () => groups.every((g) => groupGone(g.pid)), {timeoutMs: 15_000})
    await waitFor('the temporary folder gone', () => dirGone(run?.tempDir()), {timeoutMs: 15_000})
  })
})
