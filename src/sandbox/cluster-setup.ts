/**
 * What the sandbox puts into its fresh control plane: `deploy/default` as an operator would apply it,
 * minus the controller's Deployment (no kubelet runs here; the sandbox starts the controller itself as
 * that Deployment's ServiceAccount), then the pools.
 */
import {mkdir, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import type {ControlPlane} from '../controlplane/control-plane.ts'
import type {PoolKind} from '../core/index.ts'
import type {SandboxPool} from './options.ts'

const DEPLOY_DEFAULT = fileURLToPath(new URL('../../deploy/default', import.meta.url))

/**
 * A kustomization built at run time beside the sandbox's files: it takes deploy/default whole and
 * deletes the one object the sandbox replaces, so a layer added to deploy/default reaches the sandbox
 * without a change here. kustomize loads a base by a relative path only, hence path.relative.
 */
function kustomization(dir: string): string {
  return [
    'apiVersion: kustomize.config.k8s.io/v1beta1',
    'kind: Kustomization',
    'resources:',
    `  - ${path.relative(dir, DEPLOY_DEFAULT)}`,
    'patches:',
    '  - patch: |-',
    '      $patch: delete',
    '      apiVersion: apps/v1',
    '      kind: Deployment',
    '      metadata:',
    '        name: ironpool-controller',
    '        namespace: ironpool-system',
    '',
  ].join('\n')
}

/** Applies deploy/default without the controller Deployment and waits until the pool CRDs are served. */
export async function applyDeploy(plane: ControlPlane, workDir: string, kinds: readonly PoolKind[]): Promise<void> {
  const dir = path.join(workDir, 'deploy')
  await mkdir(dir, {recursive: true})
  await writeFile(path.join(dir, 'kustomization.yaml'), kustomization(dir))
  await plane.kubectl(['apply', '--server-side', '-k', dir])
  const crds = kinds.map((kind) => `crd/${kind.plural}.${kind.group}`)
  await plane.kubectl(['wait', '--for=condition=Established', '--timeout=60s', ...crds])
}

/** Creates the pools (no status: each poollet writes its own Ready). */
export async function createPools(plane: ControlPlane, pools: readonly SandboxPool[]): Promise<void> {
  await plane.kubectlApply(
    ...pools.map(({kind, name}) => ({apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, metadata: {name}, spec: {}})),
  )
}
