/**
 * The client certificate a kubeconfig authenticates with, and when it ends: read on each call, so that
 * a kubeconfig switched in place (a rotated identity) or a certificate file replaced on disk is seen as
 * the next request would see it. node:crypto's parser only: nothing heavy loads for a plain kubeconfig.
 */
import {X509Certificate} from 'node:crypto'
import {readFileSync} from 'node:fs'
import type {KubeConfig} from './client-node.ts'

/** The PEM client certificate kc's current user presents, or undefined (token, exec, none). */
export function clientCertificatePem(kc: KubeConfig): string | undefined {
  const user = kc.getCurrentUser()
  if (user?.certData) return Buffer.from(user.certData, 'base64').toString('utf8')
  if (user?.certFile) return readFileSync(user.certFile, 'utf8')
  return undefined
}

/**
 * The notAfter (wall ms) of the client certificate kc presents; undefined when it presents none or the
 * certificate cannot be read (a missing file, bad PEM): a scrape never fails over it, the API server
 * will say what is wrong with it.
 */
export function clientCertificateNotAfter(kc: KubeConfig): number | undefined {
  try {
    const pem = clientCertificatePem(kc)
    return pem === undefined ? undefined : new X509Certificate(pem).validToDate.getTime()
  } catch {
    return undefined
  }
}
