/**
 * The kubeconfig a poollet writes once it has a certificate: the bootstrap (or current) kubeconfig's
 * cluster, with its CA inlined, and a user named after the certificate's CN with certificate and key
 * inlined — self-contained, as IronCore's stores flatten theirs. And the reverse: the client
 * certificate a kubeconfig authenticates with, if any.
 */
import {KubeConfig} from '../http/client-node.ts'
import {readFileSync} from 'node:fs'
import {stringify} from 'yaml'

export {clientCertificatePem} from '../http/client-certificate.ts'

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64')

/** The current cluster of kc as kubeconfig YAML fields, its CA inlined. */
function clusterEntry(kc: KubeConfig): Record<string, unknown> {
  const cluster = kc.getCurrentCluster()
  if (cluster === null) throw new Error('the kubeconfig names no current cluster')
  const entry: Record<string, unknown> = {server: cluster.server}
  if (cluster.caData) entry['certificate-authority-data'] = cluster.caData
  else if (cluster.caFile) entry['certificate-authority-data'] = b64(readFileSync(cluster.caFile))
  if (cluster.skipTLSVerify) entry['insecure-skip-tls-verify'] = true
  if (cluster.tlsServerName) entry['tls-server-name'] = cluster.tlsServerName
  return entry
}

export function renderIssuedKubeconfig(from: KubeConfig, user: string, certPem: string, keyPem: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{name: 'default-cluster', cluster: clusterEntry(from)}],
    users: [{name: user, user: {'client-certificate-data': b64(certPem), 'client-key-data': b64(keyPem)}}],
    contexts: [{name: 'default-context', context: {cluster: 'default-cluster', user}}],
    'current-context': 'default-context',
  })
}

export function kubeConfigFromString(text: string): KubeConfig {
  const kc = new KubeConfig()
  kc.loadFromString(text)
  if (kc.getCurrentCluster() === null) throw new Error('the kubeconfig names no current cluster')
  return kc
}

/**
 * Makes `live` authenticate as `next` from its next request on, in place, so that every API client and
 * watch made from `live` switches without being rebuilt. Requests in flight finish as the old identity;
 * reuseConnections() keys its pools by certificate, so the new identity gets new TLS connections.
 */
export function switchIdentity(live: KubeConfig, next: KubeConfig): void {
  live.loadFromOptions({clusters: next.clusters, contexts: next.contexts, users: next.users, currentContext: next.getCurrentContext()})
}
