/**
 * A real control plane for a bench: kube-apiserver and etcd on loopback with the project's CRDs and
 * the deploy layers the brief names (lease namespaces, poollet RBAC and admission policy, the
 * controller's namespace, ServiceAccount and RBAC, but not its Deployment: the bench runs it).
 */
import path from 'node:path'
import {ControlPlane, type ControlPlaneOptions} from '../../src/controlplane/control-plane.ts'
import {DEPLOY_DIR, installCrds} from '../../test/support/control-plane.ts'

export async function startBenchPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const plane = await ControlPlane.start({progress: (line) => process.stderr.write(`${line}\n`), ...options})
  try {
    await installCrds(plane)
    for (const layer of ['namespaces', 'poollet', 'policies']) await plane.kubectl(['apply', '--server-side', '-k', path.join(DEPLOY_DIR, layer)])
    for (const file of ['namespace.yaml', 'rbac.yaml', 'leader-election-rbac.yaml']) {
      await plane.kubectl(['apply', '--server-side', '-f', path.join(DEPLOY_DIR, 'controller', file)])
    }
    return plane
  } catch (error) {
    await plane.stop()
    throw error
  }
}

/** Logs progress on stderr, so stdout carries only the figures. */
export function progress(message: string): void {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`)
}
