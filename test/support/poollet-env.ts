/**
 * What a poollet integration test needs: the shared control plane with IronCore's lease namespaces and
 * poollet RBAC applied (deploy/namespaces and deploy/poollet, no wider than IronCore's), a poollet
 * identity per pool (the admission policy of deploy/policies confines it to its own pool), a test runtime on a unix socket, and the real `ironpool poollet` process.
 */
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import type {ControlPlane, Identity} from '../../src/controlplane/control-plane.ts'
import type {PoolKind} from '../../src/core/pool-kinds.ts'
import {startTestRuntime, type ProbeAnswer, type TestRuntime} from '../../src/iri/test-runtime.ts'
import {CliProcess} from './cli.ts'
import {DEPLOY_DIR, sharedControlPlane} from './control-plane.ts'

let rbacApplied: Promise<void> | undefined

/** The shared control plane with the lease namespaces and the poollets' RBAC applied once. */
export async function poolletControlPlane(): Promise<ControlPlane> {
  const plane = await sharedControlPlane()
  rbacApplied ??= (async () => {
    for (const layer of ['namespaces', 'poollet', 'policies']) await plane.kubectl(['apply', '--server-side', '-k', `${DEPLOY_DIR}${layer}`])
  })()
  await rbacApplied
  return plane
}

export function poolletIdentity(plane: ControlPlane, kind: PoolKind, pool: string): Promise<Identity> {
  return plane.userIdentity(`${kind.poolletUserPrefix}${pool}`, [kind.poolletGroup])
}

export interface PoolletFixture {
  runtime: TestRuntime
  poollet: CliProcess
  stop(): Promise<void>
}

/** Fast settings: ticks every 300ms, a 150ms probe deadline, a 2s Lease. */
export const FAST = ['--heartbeat-interval=300ms', '--heartbeat-status-timeout=150ms', '--heartbeat-lease-duration=2s']

export async function startPoollet(
  plane: ControlPlane,
  kind: PoolKind,
  pool: string,
  extraArgs: readonly string[] = FAST,
  /** Another identity than the pool's own poollet, to provoke refusals. */
  kubeconfig?: string,
  /** What the test runtime's probe answers; default ordinary. */
  answer?: ProbeAnswer,
): Promise<PoolletFixture> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ironpool-pl-'))
  const runtime = await startTestRuntime({kind, socketPath: path.join(dir, 'runtime.sock'), answer})
  const identity = kubeconfig === undefined ? await poolletIdentity(plane, kind, pool) : {kubeconfig}
  const poollet = new CliProcess([
    'poollet',
    `--pool-name=${pool}`,
    `--kind=${kind.name}`,
    `--runtime-endpoint=${runtime.endpoint}`,
    `--kubeconfig=${identity.kubeconfig}`,
    '--log-format=json',
    '--log-level=debug',
    ...extraArgs,
  ])
  return {
    runtime,
    poollet,
    async stop() {
      await poollet.stop()
      await runtime.stop()
      await rm(dir, {recursive: true, force: true})
    },
  }
}
