/**
 * The operator tools' connection: the kubeconfig resolved as kubectl does (src/kube/http/kubeconfig.ts), its
 * failures turned into a KubeconfigError, and the server address kept for error lines.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {errorMessage} from '../core/index.ts'
import {loadKubeConfig, type KubeconfigOptions} from '../kube/http/kubeconfig.ts'
import {KubeconfigError} from './operator-errors.ts'

export interface KubeSession {
  kc: KubeConfig
  server: string | undefined
}

export function openSession(options: KubeconfigOptions): KubeSession {
  let kc: KubeConfig
  try {
    kc = loadKubeConfig(options)
  } catch (error) {
    throw new KubeconfigError(errorMessage(error), {cause: error})
  }
  return {kc, server: kc.getCurrentCluster()?.server}
}
