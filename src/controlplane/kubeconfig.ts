/** Self-contained kubeconfig files (certificates inline) for the control plane's identities. */
import {stringify} from 'yaml'

export type Credentials = {clientCertificatePem: string; clientKeyPem: string} | {token: string}

export function renderKubeconfig(options: {server: string; caPem: string; user: string; credentials: Credentials}): string {
  const b64 = (text: string) => Buffer.from(text).toString('base64')
  const user =
    'token' in options.credentials
      ? {token: options.credentials.token}
      : {
          'client-certificate-data': b64(options.credentials.clientCertificatePem),
          'client-key-data': b64(options.credentials.clientKeyPem),
        }
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{name: 'ironpool', cluster: {server: options.server, 'certificate-authority-data': b64(options.caPem)}}],
    users: [{name: options.user, user}],
    contexts: [{name: 'ironpool', context: {cluster: 'ironpool', user: options.user}}],
    'current-context': 'ironpool',
    preferences: {},
  })
}
