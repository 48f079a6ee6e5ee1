/**
 * Loads the kubeconfig the way kubectl resolves it: --kubeconfig, else $KUBECONFIG, else ~/.kube/config,
 * else the in-cluster service account; --context picks a context.
 */
import {KubeConfig} from '@kubernetes/client-node'
import {existsSync} from 'node:fs'

export interface KubeconfigOptions {
  kubeconfig?: string
  context?: string
}

export function loadKubeConfig(options: KubeconfigOptions = {}): KubeConfig {
  const kc = new KubeConfig()
  if (options.kubeconfig) {
    if (!existsSync(options.kubeconfig)) throw new Error(`kubeconfig ${options.kubeconfig} does not exist`)
    kc.loadFromFile(options.kubeconfig)
  } else {
    kc.loadFromDefault()
  }
  if (kc.getCurrentCluster() === null) {
    throw new Error('no Kubernetes cluster configured: pass --kubeconfig, set KUBECONFIG, or run in a cluster')
  }
  if (options.context) {
    if (!kc.getContextObject(options.context)) throw new Error(`context ${options.context} not found in kubeconfig`)
    kc.setCurrentContext(options.context)
  }
  return kc
}

/** The identity a kubeconfig authenticates as, for logs: the user entry's name. */
export function kubeconfigUser(kc: KubeConfig): string {
  return kc.getCurrentUser()?.name ?? 'unknown'
}
