/**
 * The poollet's KubeConfig from its identity flags, as IronCore's config getter resolves it: a plain
 * kubeconfig (file, Secret, or the default loading rules) read once; or, with --bootstrap-kubeconfig or
 * --rotate-certificates, an identity kept in the file or Secret, bootstrapped when missing or expired and,
 * with rotation, renewed in place by a runnable. Every KubeConfig gets shared connections and the rate limit.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {existsSync} from 'node:fs'
import {IDENTITY_FLAGS, systemClock, type IdentityOptions, type Logger, type PoolKind} from '../core/index.ts'
import {loadKubeConfig, reuseConnections} from '../kube/http/kubeconfig.ts'
import type {KubeconfigStore} from '../kube/identity/kubeconfig-store.ts'
import {limitRequestRate} from '../kube/http/request-rate.ts'
import type {Runnable} from '../runtime/runnable.ts'

export interface PoolletKubeConfig {
  kubeConfig: KubeConfig
  /** The certificate rotation, when on: one more runnable of the poollet's manager. */
  rotation?: Runnable
  /** Subscribes to the rotation's failed renewals, when rotation is on. */
  onRotationFailure?: (listener: () => void) => void
}

/** A bad flag value found only when it is read (a missing file): the command reports it as usage. */
export class IdentityUsageError extends Error {
  override readonly name = 'IdentityUsageError'
}

export interface PoolletKubeConfigDeps {
  kind: PoolKind
  pool: string
  logger: Logger
  /** Test seams of PoolletIdentity. */
  identity?: {csrPollMs?: number; retryInitialMs?: number}
}

// The stores, the CSR machinery and X.509 (half a megabyte of code) load only for a poollet that
// needs them: a plain kubeconfig file, the common case, reads none of it (bench:poollet, issue 12).
async function store(options: IdentityOptions, limit: (kc: KubeConfig) => void): Promise<KubeconfigStore | undefined> {
  const source = options.source
  if (source.type === 'default') return undefined
  const {defaultSecretNamespace, fileKubeconfigStore, secretKubeconfigStore} = await import('../kube/identity/kubeconfig-store.ts')
  if (source.type === 'file') return fileKubeconfigStore(source.path)
  if (source.type === 'secret') {
    // The Secret is read and written with the process's own cluster credentials (in-cluster, $KUBECONFIG), as IronCore does.
    const local = loadKubeConfig()
    limit(local)
    return secretKubeconfigStore(local, source.namespace ?? defaultSecretNamespace(), source.name)
  }
  return undefined
}

export async function poolletKubeConfig(options: IdentityOptions, deps: PoolletKubeConfigDeps, signal: AbortSignal): Promise<PoolletKubeConfig> {
  // loadKubeConfig() shares connections already; a KubeConfig made from text gets both here.
  const limit = (kc: KubeConfig) => limitRequestRate(kc, options, systemClock)
  const prepare = (kc: KubeConfig) => {
    reuseConnections(kc)
    limit(kc)
  }
  const identityManaged = options.bootstrapKubeconfig !== undefined || options.rotateCertificates
  if (!identityManaged && options.source.type !== 'secret') {
    const kc = loadKubeConfig({kubeconfig: options.source.type === 'file' ? options.source.path : undefined})
    limit(kc)
    return {kubeConfig: kc}
  }
  const kept = await store(options, limit)
  if (!identityManaged || kept === undefined) {
    if (options.source.type === 'secret' && kept !== undefined) {
      const {kubeConfigFromString} = await import('../kube/identity/issued-kubeconfig.ts')
      const text = await kept.load()
      if (text === undefined) throw new IdentityUsageError(`${IDENTITY_FLAGS.secretName}: ${kept.describe} holds no kubeconfig (field kubeconfig)`)
      const kc = kubeConfigFromString(text)
      prepare(kc)
      return {kubeConfig: kc}
    }
    const kc = loadKubeConfig({kubeconfig: options.source.type === 'file' ? options.source.path : undefined})
    limit(kc)
    return {kubeConfig: kc}
  }

  let bootstrap: {kubeConfig: KubeConfig; path: string} | undefined
  if (options.bootstrapKubeconfig !== undefined) {
    // Like IronCore, a bootstrap kubeconfig that is not there is no error until it is needed.
    if (existsSync(options.bootstrapKubeconfig)) {
      bootstrap = {kubeConfig: loadKubeConfig({kubeconfig: options.bootstrapKubeconfig}), path: options.bootstrapKubeconfig}
      limit(bootstrap.kubeConfig)
    } else deps.logger.warn({bootstrapKubeconfig: options.bootstrapKubeconfig}, 'the bootstrap kubeconfig does not exist; it is needed only when the kubeconfig is missing or expired')
  }
  const {PoolletIdentity} = await import('../kube/identity/poollet-identity.ts')
  const identity = await PoolletIdentity.establish(
    {kind: deps.kind, pool: deps.pool, store: kept, bootstrap, clock: systemClock, logger: deps.logger, csrTimeoutMs: options.csrTimeoutMs, prepare, ...deps.identity},
    signal,
  )
  return {
    kubeConfig: identity.kubeConfig,
    rotation: options.rotateCertificates ? {name: 'certificate rotation', start: (runSignal) => identity.rotate(runSignal)} : undefined,
    onRotationFailure: options.rotateCertificates ? (listener) => identity.onRotationFailure(listener) : undefined,
  }
}
