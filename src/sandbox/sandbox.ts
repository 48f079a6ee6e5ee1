/**
 * The whole system on one machine: a fresh control plane with deploy/ applied, the pools, the
 * controller as its own ServiceAccount, and per pool a test runtime and a poollet as the pool's own
 * identity, every ironpool process separate and in its own process group. Everything lives in the
 * control plane's temporary folder (kubeconfigs, sockets, logs), so one removal, or the reaper after a
 * crash, leaves nothing behind.
 */
import {mkdir} from 'node:fs/promises'
import path from 'node:path'
import pino from 'pino'
import {ControlPlane} from '../controlplane/control-plane.ts'
import {loadKubeConfig} from '../kube/http/kubeconfig.ts'
import {createLogger} from '../observe/logger.ts'
import {SandboxChild} from './child-process.ts'
import {applyDeploy, createPools} from './cluster-setup.ts'
import type {SandboxOptions} from './options.ts'
import {startPoolActor, type PoolActor} from './pool-actor.ts'
import {PoolBoard} from './pool-board.ts'

/** The controller's token outlives any sandbox session; no controller-manager runs here to renew it. */
const CONTROLLER_TOKEN_SECONDS = 7 * 24 * 3600

export interface Sandbox {
  readonly plane: ControlPlane
  /** Sockets, logs and the deploy kustomization, inside the control plane's folder. */
  readonly workDir: string
  readonly controller: SandboxChild
  readonly actors: ReadonlyMap<string, PoolActor>
  readonly board: PoolBoard
  /** Every process group started (control plane, controller, poollets), by name; pid = pgid. */
  processGroups(): {name: string; pid: number}[]
  /** Stops everything, poollets and controller first; safe to call twice. */
  stop(): Promise<void>
}

export async function startSandbox(options: SandboxOptions, progress: (line: string) => void, signal: AbortSignal): Promise<Sandbox> {
  progress('starting etcd and kube-apiserver')
  const plane = await ControlPlane.start({progress})
  const workDir = path.join(plane.dir, 'sandbox')
  const cachesAbort = new AbortController()
  const started: {controller?: SandboxChild; actors: PoolActor[]} = {actors: []}
  let stopping: Promise<void> | undefined
  const stop = () =>
    (stopping ??= (async () => {
      cachesAbort.abort()
      await Promise.all([started.controller?.stop(), ...started.actors.map((a) => a.poollet.stop())])
      await Promise.all(started.actors.map((a) => a.runtime.stop()))
      await plane.stop()
    })())
  const step = async <T>(line: string, work: () => Promise<T>): Promise<T> => {
    signal.throwIfAborted()
    progress(line)
    return work()
  }

  try {
    await mkdir(workDir)
    await step('applying deploy/default (CRDs, lease namespaces, RBAC, admission policy) without the controller Deployment', () =>
      applyDeploy(plane, workDir, options.kinds),
    )
    await step(`creating ${options.pools.length} pools`, () => createPools(plane, options.pools))
    const [controllerIdentity] = await step('starting runtimes and minting identities', () =>
      Promise.all([
        plane.serviceAccountIdentity('ironpool-system', 'ironpool-controller', CONTROLLER_TOKEN_SECONDS),
        Promise.all(options.pools.map(async (pool) => started.actors.push(await startPoolActor(plane, options, pool, workDir)))),
      ]),
    )
    started.controller = new SandboxChild({
      name: 'controller',
      logDir: workDir,
      plane,
      args: [
        'controller',
        `--kubeconfig=${controllerIdentity.kubeconfig}`,
        `--grace-period=${options.gracePeriodMs}ms`,
        `--kinds=${options.kinds.map((k) => k.name).join(',')}`,
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
        '--log-format=json',
      ],
    })
    const {controller} = started
    const actors = new Map(options.pools.map((pool) => [pool.name, started.actors.find((a) => a.pool === pool) as PoolActor]))
    await step(`starting the controller and ${actors.size} poollets`, () => {
      controller.start()
      for (const actor of actors.values()) actor.poollet.start()
      return Promise.resolve()
    })
    // The sandbox's own warnings (a watch reconnecting) go to a file: stderr belongs to the live view.
    const logger = createLogger({format: 'json', destination: pino.destination({dest: path.join(workDir, 'sandbox.log'), sync: true})})
    const board = new PoolBoard(loadKubeConfig({kubeconfig: plane.adminKubeconfig}), options.pools, logger)
    await step('watching pools and Leases', () => board.start(AbortSignal.any([signal, cachesAbort.signal])))
    return {
      plane,
      workDir,
      controller,
      actors,
      board,
      processGroups: () => [
        ...plane.pids.map((pid) => ({name: 'control-plane', pid})),
        ...[controller, ...[...actors.values()].map((a) => a.poollet)].flatMap((c) => (c.pid === undefined ? [] : [{name: c.name, pid: c.pid}])),
      ],
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}
