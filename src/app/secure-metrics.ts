/**
 * The controller's `--metrics-secure`: /metrics over TLS, each scrape authorized by kube-apiserver
 * (TokenReview, then SubjectAccessReview for `get` on the path), as controller-runtime's
 * `filters.WithAuthenticationAndAuthorization` serves kubebuilder's metrics. The serving certificate is
 * `tls.crt` and `tls.key` from --metrics-cert-dir (a cert-manager Secret, say), or, without one, a
 * self-signed certificate made at start, as controller-runtime makes one.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {readFile} from 'node:fs/promises'
import {hostname} from 'node:os'
import path from 'node:path'
import {systemClock, type Logger} from '../core/index.ts'
import {kubeReviewApi, MetricsAuthorizer} from '../kube/identity/metrics-authorizer.ts'
import {selfSignedServingCertificate} from '../kube/identity/x509.ts'
import type {SecureMetrics} from '../observe/http-server.ts'

export async function secureMetrics(kubeConfig: KubeConfig, certDir: string | undefined, logger: Logger): Promise<SecureMetrics> {
  let tls: SecureMetrics['tls']
  if (certDir === undefined) {
    tls = await selfSignedServingCertificate([hostname(), 'localhost', '127.0.0.1'], new Date(systemClock.wall()))
    logger.info({}, 'serving /metrics with a self-signed certificate (no --metrics-cert-dir)')
  } else {
    const [certPem, keyPem] = await Promise.all([readFile(path.join(certDir, 'tls.crt'), 'utf8'), readFile(path.join(certDir, 'tls.key'), 'utf8')])
    tls = {certPem, keyPem}
  }
  const authorizer = new MetricsAuthorizer({api: kubeReviewApi(kubeConfig), clock: systemClock, logger})
  return {tls, authorize: (authorization, urlPath) => authorizer.authorize(authorization, urlPath)}
}
