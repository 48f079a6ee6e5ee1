/**
 * What every fault scenario needs: its own control plane (the scenarios pause and kill its parts), live
 * pools with real `ironpool poollet` processes and test runtimes, one pool whose poollet is frozen
 * (SIGSTOP) just before each fault, the real `ironpool controller`, and a record of every Ready change of
 * every pool, from the API (polled) and from the controller's log.
 *
 * A scenario reads as: prepare() (every pool Ready, then freeze one poollet), the fault for two grace
 * periods, the end of the fault, then assertions on order and outcomes only: no live pool ever Unknown,
 * the frozen pool marked once the view is whole again, the controller still running.
 */
import {KubeConfig, type V1Lease} from '@kubernetes/client-node'
import path from 'node:path'
import {LeaseLoad} from '../../../bench/support/lease-load.ts'
import {forEachLimit} from '../../../bench/support/limit.ts'
import {formatMicroTime, formatTime} from '../../../src/core/conditions.ts'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import type {Pool} from '../../../src/core/types.ts'
import {apiRequest} from '../../../src/kube/http/api-request.ts'
import {loadKubeConfig} from '../../../src/kube/http/kubeconfig.ts'
import {installCrds} from '../../support/control-plane.ts'
import {ControllerProcess, controllerIdentity} from '../../support/controller-env.ts'
import {KubeObjects, readyOf} from '../../support/kube-objects.ts'
import {poolletIdentity, startPoollet, type PoolletFixture} from '../../support/poollet-env.ts'
import {proxyKubeconfig, type ProxiedKubeconfig} from '../../support/tcp-proxy.ts'
import {waitFor} from '../../support/wait.ts'

export const kind = POOL_KINDS.machine

/** The controller's grace period: short, but six heartbeats long, so a busy machine does not starve a live poollet past it. */
export const GRACE_MS = 3_000
export const HEARTBEAT_MS = 500
export const POOLLET_ARGS = [`--heartbeat-interval=${HEARTBEAT_MS}ms`, '--heartbeat-status-timeout=250ms', '--heartbeat-lease-duration=2s']

/**
 * The stated bound: once the controller's view is whole again, the frozen pool is marked within one
 * grace period plus this. Generous for 2 busy cores (the engine itself needs well under a second:
 * the confirming read and the write).
 */
export const MARK_BOUND_MS = 15_000

/** How long the control plane may take to come back (an API server restart replays its start-up). */
const RECOVERY_MS = 90_000

export interface ReadyChange {
  pool: string
  status: string
  /** Where in the fleet's timeline it was seen. */
  seq: number
}

/** One line of the controller's log (pino JSON), with its position in the log. */
export interface LogLine {
  index: number
  msg: string
  fields: Record<string, unknown>
}

export interface FleetOptions {
  live?: number
  /** Pools (of the live ones) whose poollet talks to the API through its own proxy. */
  proxiedPoollets?: number
  /** More flags for every poollet (e.g. --metrics-bind-address). */
  poolletArgs?: readonly string[]
  /**
   * Pools without a poollet, whose Leases a load generator renews (bench/support/lease-load.ts, as
   * admin, each at its own phase of the interval): where a scenario needs many pools, or many to die.
   * They start Ready=True, as a poollet would have left them; nothing sets them back once marked.
   */
  renewed?: {count: number; intervalMs: number}
  /** Extra etcd flags for the fleet's control plane (e.g. a space quota a scenario fills). */
  etcdArgs?: readonly string[]
}

export class FaultFleet {
  readonly plane: ControlPlane
  readonly admin: KubeObjects
  readonly live: string[] = []
  /** The load generator's pools (see FleetOptions.renewed), and those whose renewals stopped for good. */
  readonly renewed: string[] = []
  readonly dead = new Set<string>()
  /** The renewed pools whose renewals are paused for now (a partition): not dead, they come back. */
  readonly cut = new Set<string>()
  load: LeaseLoad | undefined
  readonly frozen = 'frozen'
  readonly poollets = new Map<string, PoolletFixture>()
  /** The proxies in front of the proxied poollets, by pool. */
  readonly poolletProxies = new Map<string, ProxiedKubeconfig>()
  controller: ControllerProcess | undefined
  /** Every Ready change seen by polling the API, and every marker the test set, in one order. */
  readonly changes: ReadyChange[] = []
  readonly markers: {what: string; seq: number}[] = []
  private seq = 0
  private readonly last = new Map<string, string>()
  private readonly pollStop = new AbortController()
  private polling: Promise<void> | undefined
  private readonly kc: KubeConfig

  private constructor(plane: ControlPlane) {
    this.plane = plane
    this.admin = new KubeObjects(plane.adminKubeconfig)
    this.kc = loadKubeConfig({kubeconfig: plane.adminKubeconfig})
  }

  /** A control plane of its own with deploy/ applied, the pools, and their poollets, every pool Ready. */
  static async start(options: FleetOptions = {}): Promise<FaultFleet> {
    const plane = await ControlPlane.start({etcdArgs: options.etcdArgs})
    const fleet = new FaultFleet(plane)
    try {
      await installCrds(plane)
      await controllerIdentity(plane)
      const live = options.live ?? 4
      for (let i = 1; i <= live; i++) fleet.live.push(`live-${i}`)
      const proxied = new Set(fleet.live.slice(0, options.proxiedPoollets ?? 0))
      for (const pool of [...fleet.live, fleet.frozen]) {
        await fleet.admin.createPool(kind, pool)
        let kubeconfig: string | undefined
        if (proxied.has(pool)) {
          const proxy = await proxyKubeconfig((await poolletIdentity(plane, kind, pool)).kubeconfig, path.join(plane.dir, `${pool}-proxied.kubeconfig`))
          fleet.poolletProxies.set(pool, proxy)
          kubeconfig = proxy.kubeconfig
        }
        fleet.poollets.set(pool, await startPoollet(plane, kind, pool, [...POOLLET_ARGS, ...(options.poolletArgs ?? [])], kubeconfig))
      }
      if (options.renewed !== undefined) {
        for (let i = 1; i <= options.renewed.count; i++) fleet.renewed.push(`renewed-${String(i).padStart(3, '0')}`)
        await seedReadyPools(fleet.admin, fleet.renewed)
        const admin = new KubeConfig()
        admin.loadFromFile(plane.adminKubeconfig)
        fleet.load = new LeaseLoad({kubeConfig: admin, namespace: kind.leaseNamespace, names: fleet.renewed, intervalMs: options.renewed.intervalMs, concurrency: 16})
        fleet.load.start()
      }
      await fleet.waitAllReady()
      fleet.polling = fleet.poll()
      return fleet
    } catch (error) {
      await fleet.stop()
      throw error
    }
  }

  /** The controller's kubeconfig: its ServiceAccount's, or a copy through a proxy. */
  async controllerKubeconfig(proxy?: {terminateTls: boolean; lossy?: {seed: number}}): Promise<{kubeconfig: string; proxy?: ProxiedKubeconfig}> {
    const identity = await controllerIdentity(this.plane)
    if (proxy === undefined) return {kubeconfig: identity.kubeconfig}
    const proxied = await proxyKubeconfig(identity.kubeconfig, path.join(this.plane.dir, `controller-${Date.now()}.kubeconfig`), proxy)
    return {kubeconfig: proxied.kubeconfig, proxy: proxied}
  }

  /** The grace period of the controller that runs (or ran last). */
  graceMs = GRACE_MS

  /** Starts the real controller on this kubeconfig, replacing one that runs; resolves once its view is whole. */
  async startController(kubeconfig: string, extraArgs: readonly string[] = [], graceMs = GRACE_MS): Promise<ControllerProcess> {
    await this.stopController()
    this.graceMs = graceMs
    const controller = new ControllerProcess([
      'controller',
      `--kubeconfig=${kubeconfig}`,
      `--grace-period=${graceMs}ms`,
      '--kinds=machine',
      '--metrics-bind-address=127.0.0.1:0',
      '--health-probe-bind-address=127.0.0.1:0',
      '--log-format=json',
      '--log-level=info',
      ...extraArgs,
    ])
    this.controller = controller
    await controller.waitForLog('controller starting', {}, 30_000)
    await waitFor('the controller\'s view whole', () => findLine(controller, 0, (l) => l.msg.startsWith('view whole')), {timeoutMs: 30_000})
    return controller
  }

  async stopController(): Promise<void> {
    const controller = this.controller
    this.controller = undefined
    await controller?.stop()
  }

  /** A point in the timeline, to order changes against. */
  mark(what: string): number {
    const seq = ++this.seq
    this.markers.push({what, seq})
    return seq
  }

  freeze(): void {
    this.poollets.get(this.frozen)?.poollet.child.kill('SIGSTOP')
  }

  thaw(): void {
    this.poollets.get(this.frozen)?.poollet.child.kill('SIGCONT')
  }

  /** Before a fault: the frozen pool thawed and Ready again (every pool Ready), then frozen anew. */
  async prepare(): Promise<void> {
    this.thaw()
    await this.waitAllReady()
    this.freeze()
  }

  /** The renewed pools whose renewals stop for good, from now on: they must be marked. */
  kill(names: readonly string[]): void {
    for (const name of names) this.dead.add(name)
    this.load?.stop(names)
  }

  /** Renewed pools not dead (nor cut off), in order. */
  aliveRenewed(): string[] {
    return this.renewed.filter((name) => !this.dead.has(name) && !this.cut.has(name))
  }

  /** A partition of the load generator's pools: their renewals stop until reconnect(); they are not dead. */
  cutOff(names: readonly string[]): void {
    for (const name of names) this.cut.add(name)
    this.load?.stop(names)
  }

  reconnect(names: readonly string[]): void {
    for (const name of names) this.cut.delete(name)
    this.load?.resume(names)
  }

  async waitAllReady(timeoutMs = 60_000): Promise<void> {
    await waitFor('every pool Ready=True', async () => {
      const pools = await this.listPools()
      const all = [...this.live, ...this.renewed.filter((name) => !this.dead.has(name)), this.frozen]
      return all.every((name) => pools.some((p) => p.metadata.name === name && readyOf(p)?.status === 'True'))
    }, {timeoutMs, intervalMs: 200})
  }

  /**
   * Resolves once the controller has marked the frozen pool after log line `after`; the line. Fails
   * after one grace period plus the stated bound.
   */
  async frozenMarked(after: number): Promise<LogLine> {
    const controller = this.requireController()
    return waitFor(`${this.frozen} marked Unknown`, () => findLine(controller, after, (l) => isMark(l) && l.fields.pool === this.frozen), {
      timeoutMs: GRACE_MS + MARK_BOUND_MS,
      intervalMs: 50,
    })
  }

  /** The line at which the controller's view was whole again after log line `after` (it went blind in between). */
  async viewWholeAgain(after: number): Promise<{blind: LogLine; whole: LogLine}> {
    const controller = this.requireController()
    return waitFor('the controller\'s view not whole, then whole again', () => {
      const blind = findLine(controller, after, (l) => l.msg.startsWith('view not whole'))
      const whole = blind && findLine(controller, blind.index, (l) => l.msg.startsWith('view whole'))
      return blind && whole ? {blind, whole} : undefined
    }, {timeoutMs: RECOVERY_MS, intervalMs: 50})
  }

  /** Log position now, to look for lines after it. */
  logPosition(): number {
    return this.requireController().stderr.length
  }

  /**
   * Live pools seen Unknown since a timeline point (API) or marked by the controller since a log
   * position: every pool but the frozen one and the dead ones (a pool cut off by a partition is live).
   */
  falseUnknowns(sinceSeq: number, sinceLog: number, allowed: readonly string[] = []): string[] {
    const live = new Set([...this.live, ...this.renewed.filter((p) => !this.dead.has(p))].filter((p) => !allowed.includes(p)))
    const seen = this.changes.filter((c) => c.seq > sinceSeq && c.status === 'Unknown' && live.has(c.pool)).map((c) => `${c.pool} Unknown (API, #${c.seq})`)
    const marked = logLines(this.requireController(), sinceLog)
      .filter((l) => isMark(l) && live.has(String(l.fields.pool)))
      .map((l) => `${String(l.fields.pool)} marked (controller log, line ${l.index})`)
    return [...seen, ...marked]
  }

  /** Waits until every live pool's Lease has been renewed twice more: time enough for a late false mark to show. */
  async settle(): Promise<void> {
    const pools = [...this.live, ...this.aliveRenewed()]
    const renewTimes = async () => Promise.all(pools.map(async (p) => String((await this.admin.getLease(kind, p))?.spec?.renewTime)))
    for (let round = 0; round < 2; round++) {
      const before = await renewTimes()
      await waitFor('every live Lease renewed', async () => (await renewTimes()).every((t, i) => t !== before[i]), {timeoutMs: 30_000, intervalMs: 100})
    }
  }

  /** How the controller process ended, or undefined while it runs (no crash, no restart). */
  controllerExit(): {code: number | null; signal: string | null} | undefined {
    const child = this.requireController().child
    return child.exitCode === null && child.signalCode === null ? undefined : {code: child.exitCode, signal: child.signalCode}
  }

  /** The controller's last log lines, for a failure message. */
  controllerTail(lines = 40): string {
    return this.controller?.stderr.slice(-lines).join('\n') ?? '(no controller)'
  }

  async listPools(): Promise<Pool[]> {
    const body = await apiRequest<{items: Pool[]}>(this.kc, {method: 'GET', path: `/apis/${kind.group}/${kind.version}/${kind.plural}`, timeoutMs: 2_000})
    return body.items
  }

  async stop(): Promise<void> {
    this.pollStop.abort()
    await this.polling
    // The frozen poollet resumes so that it ends on SIGTERM like the others.
    this.thaw()
    await this.stopController()
    await this.load?.close()
    for (const fixture of this.poollets.values()) await fixture.stop()
    for (const {proxy} of this.poolletProxies.values()) await proxy.close()
    await this.plane.stop()
  }

  private requireController(): ControllerProcess {
    if (this.controller === undefined) throw new Error('no controller running')
    return this.controller
  }

  /** Polls every pool's Ready (bounded requests, so an outage only leaves gaps) and records each change. */
  private async poll(): Promise<void> {
    const signal = this.pollStop.signal
    while (!signal.aborted) {
      try {
        for (const pool of await this.listPools()) {
          const status = readyOf(pool)?.status ?? 'none'
          if (this.last.get(pool.metadata.name) !== status) {
            this.last.set(pool.metadata.name, status)
            this.changes.push({pool: pool.metadata.name, status, seq: ++this.seq})
          }
        }
      } catch {
        // The API is down or paused: the controller's log still records every mark.
      }
      await new Promise((resolve) => setTimeout(resolve, 150))
    }
  }
}

/**
 * Creates pools Ready=True (as a poollet would have left them) and their Leases, renewed now, with
 * bounded concurrency: the pools of a load generator.
 */
export async function seedReadyPools(admin: KubeObjects, names: readonly string[]): Promise<void> {
  await forEachLimit(names, 16, async (name) => {
    await admin.createPool(kind, name)
    const now = new Date()
    await admin.setConditions(kind, name, [
      {type: 'Ready', status: 'True', reason: 'HeartbeatReceived', message: kind.readyMessage, observedGeneration: 1, lastUpdateTime: formatTime(now), lastTransitionTime: formatTime(now)},
    ])
    await admin.createLease(kind, name, {holderIdentity: `${name}_load`, leaseDurationSeconds: 40, acquireTime: formatMicroTime(now), renewTime: formatMicroTime(now)} as unknown as V1Lease['spec'])
  })
}

function isMark(line: LogLine): boolean {
  return line.msg.includes('marked Ready=Unknown')
}

export function logLines(controller: ControllerProcess, after: number): LogLine[] {
  const lines: LogLine[] = []
  for (let index = after; index < controller.stderr.length; index++) {
    try {
      const fields = JSON.parse(controller.stderr[index] as string) as Record<string, unknown>
      lines.push({index, msg: String(fields.msg), fields})
    } catch {
      // Not a log line.
    }
  }
  return lines
}

function findLine(controller: ControllerProcess, after: number, match: (line: LogLine) => boolean): LogLine | undefined {
  return logLines(controller, after).find(match)
}

/**
 * The mocha hooks of a suite with a fleet of its own: started before its tests, the controller stopped
 * (and then `afterEachTest`, e.g. closing a proxy) after each, everything stopped at the end. Returns
 * the fleet's getter, for the tests.
 */
export function fleetHooks(options: FleetOptions, afterEachTest: () => Promise<void> = async () => {}): () => FaultFleet {
  let fleet: FaultFleet | undefined
  before(async function () {
    this.timeout(180_000)
    fleet = await FaultFleet.start(options)
  })
  afterEach(async () => {
    await fleet?.stopController()
    await afterEachTest()
  })
  after(async function () {
    this.timeout(60_000)
    await fleet?.stop()
  })
  return () => {
    if (fleet === undefined) throw new Error('the fleet did not start')
    return fleet
  }
}

/** Holds a fault for a while: the fault's length, not a synchronisation. */
export function hold(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
