/**
 * The control plane shared by the integration tests of one mocha run: started on first use, with the
 * project's CRDs applied, and stopped by the root hook in hooks.ts. Tests that stop or break the control
 * plane start their own with ControlPlane.start() instead.
 */
import {fileURLToPath} from 'node:url'
import {ControlPlane} from '../../src/controlplane/control-plane.ts'
import {POOL_KIND_NAMES, POOL_KINDS} from '../../src/core/pool-kinds.ts'
import {waitFor} from './wait.ts'

export const DEPLOY_DIR = fileURLToPath(new URL('../../deploy/', import.meta.url))

let shared: Promise<ControlPlane> | undefined

export function sharedControlPlane(): Promise<ControlPlane> {
  shared ??= (async () => {
    const plane = await ControlPlane.start({progress: (line) => process.stderr.write(`${line}\n`)})
    await installCrds(plane)
    return plane
  })()
  return shared
}

/** Applies deploy/crds and waits until the API serves them. */
export async function installCrds(plane: ControlPlane): Promise<void> {
  await plane.kubectl(['apply', '--server-side', '-k', `${DEPLOY_DIR}crds`])
  // Polled rather than `kubectl wait`, which fails at once on a CRD whose status has no conditions yet.
  for (const name of POOL_KIND_NAMES) {
    const crd = `crd/${POOL_KINDS[name].plural}.${POOL_KINDS[name].group}`
    await waitFor(`${crd} Established`, async () =>
      (await plane.kubectl(['get', crd, '-o', 'jsonpath={.status.conditions[?(@.type=="Established")].status}'])) === 'True',
    {timeoutMs: 30_000, intervalMs: 100})
  }
}

export async function stopSharedControlPlane(): Promise<void> {
  if (shared === undefined) return
  const plane = await shared.catch(() => undefined)
  shared = undefined
  await plane?.stop()
}
