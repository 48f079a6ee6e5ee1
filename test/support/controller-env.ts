/**
 * What a controller integration test needs: a control plane with the lease namespaces, RBAC and
 * policy of deploy/ (the controller's ServiceAccount and RBAC, without its Deployment: no kubelet
 * runs here), the controller's own identity, the real `ironpool controller` process, and a stand-in
 * poollet that renews Leases as admin.
 */
import type {ControlPlane, Identity} from '../../src/controlplane/control-plane.ts'
import {formatMicroTime} from '../../src/core/conditions.ts'
import type {PoolKind} from '../../src/core/pool-kinds.ts'
import {CliProcess} from './cli.ts'
import {DEPLOY_DIR} from './control-plane.ts'
import type {KubeObjects} from './kube-objects.ts'

const applied = new WeakMap<ControlPlane, Promise<Identity>>()

/** Applies deploy/ minus the controller Deployment (once per control plane); the controller's identity. */
export function controllerIdentity(plane: ControlPlane): Promise<Identity> {
  let identity = applied.get(plane)
  if (identity === undefined) {
    identity = (async () => {
      for (const layer of ['crds', 'namespaces', 'poollet', 'policies']) await plane.kubectl(['apply', '--server-side', '-k', `${DEPLOY_DIR}${layer}`])
      const controller = ['namespace.yaml', 'rbac.yaml', 'leader-election-rbac.yaml'].flatMap((f) => ['-f', `${DEPLOY_DIR}controller/${f}`])
      await plane.kubectl(['apply', '--server-side', ...controller])
      return plane.serviceAccountIdentity('ironpool-system', 'ironpool-controller')
    })()
    applied.set(plane, identity)
  }
  return identity
}

/**
 * The tests' grace period: ten times the stand-in poollet's 200 ms renewal interval, so that a loaded
 * machine (a renewal that waits a second for a busy API server) never makes a live pool look silent.
 */
export const GRACE_MS = 2_000

export class ControllerProcess extends CliProcess {
  /** The value of one series on its /metrics (e.g. `name{label="x"}`), or undefined when it has none. */
  async metric(series: string): Promise<number | undefined> {
    const text = await (await fetch(await this.metricsUrl())).text()
    const line = text.split('\n').find((l) => l.startsWith(`${series} `))
    return line === undefined ? undefined : Number(line.slice(series.length + 1))
  }

  /** Names of the pools this controller marked Unknown, from its log. */
  marked(): string[] {
    return this.logs()
      .filter((l) => String(l.msg).includes('marked Ready=Unknown'))
      .map((l) => String(l.pool))
  }
}

export async function startController(plane: ControlPlane, extraArgs: readonly string[] = []): Promise<ControllerProcess> {
  const identity = await controllerIdentity(plane)
  const controller = new ControllerProcess([
    'controller',
    `--kubeconfig=${identity.kubeconfig}`,
    // A test may choose its own grace period; the flag may be given once only.
    ...(extraArgs.some((a) => a.startsWith('--grace-period=')) ? [] : [`--grace-period=${GRACE_MS}ms`]),
    '--metrics-bind-address=127.0.0.1:0',
    '--health-probe-bind-address=127.0.0.1:0',
    '--log-format=json',
    '--log-level=debug',
    ...extraArgs,
  ])
  await controller.waitForLog('controller starting', {}, 20_000)
  return controller
}

/** A stand-in poollet: renews the pool's Lease every everyMs (creating it first) until stopped. */
export function keepRenewing(admin: KubeObjects, kind: PoolKind, pool: string, everyMs = 200): {stop(): Promise<void>} {
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      await admin.renewLease(kind, pool, formatMicroTime(new Date())).catch(() => {})
      await new Promise((resolve) => setTimeout(resolve, everyMs))
    }
  })()
  return {
    async stop() {
      stopped = true
      await loop
    },
  }
}
