/**
 * When a poollet renews its client certificate, and whether the one it has may be used at start: the
 * kubelet's rules (client-go's certificate manager), on wall-clock times since certificates carry them.
 *
 * - Renew at a jittered 70–90 % of the lifetime, so that poollets whose certificates were issued together
 *   do not all ask at once.
 * - The lifetime starts when the certificate was obtained when the poollet knows it (it just got it from
 *   its CSR), else five minutes after notBefore. Why: Kubernetes' signer backdates notBefore by exactly
 *   five minutes for clock skew (pkg/controller/certificates/signer), which for a short-lived
 *   certificate would put 70 % of the lifetime before the moment it was issued, and renew it at once, in
 *   a loop (the kubelet counts from notBefore and lives with it because its certificates last a year).
 *   For a certificate of days the five minutes are noise; one that lives less than five minutes in all
 *   counts from notBefore.
 * - At start, a certificate already past 90 % of its lifetime (the latest renewal point), expired, or not
 *   yet valid is not trusted to last through a renewal: with a bootstrap kubeconfig, bootstrap again.
 */

export const RENEW_AT_MIN = 0.7
export const RENEW_AT_MAX = 0.9
/** How far Kubernetes' CSR signer backdates notBefore. */
export const SIGNER_BACKDATE_MS = 5 * 60_000

export interface CertificateTimes {
  /** Wall-clock milliseconds. */
  notBefore: number
  notAfter: number
  /** When this process obtained the certificate (wall ms), if it did. */
  obtainedAt?: number
}

function lifetimeStart(cert: CertificateTimes): number {
  if (cert.obtainedAt !== undefined) return Math.max(cert.notBefore, Math.min(cert.obtainedAt, cert.notAfter))
  return cert.notAfter - cert.notBefore > SIGNER_BACKDATE_MS ? cert.notBefore + SIGNER_BACKDATE_MS : cert.notBefore
}

/** The wall time at which to renew: start + (70–90 %) of the lifetime; random() in [0, 1). */
export function renewalTime(cert: CertificateTimes, random: () => number = Math.random): number {
  const start = lifetimeStart(cert)
  const fraction = RENEW_AT_MIN + (RENEW_AT_MAX - RENEW_AT_MIN) * random()
  return start + (cert.notAfter - start) * fraction
}

export type CertificateState = 'valid' | 'expiring' | 'expired' | 'not-yet-valid'

/** How a certificate stands at wall time now; `expiring` is past the latest renewal point (90 %). */
export function certificateState(cert: CertificateTimes, now: number): CertificateState {
  if (now < cert.notBefore) return 'not-yet-valid'
  if (now >= cert.notAfter) return 'expired'
  const start = lifetimeStart(cert)
  return now >= start + (cert.notAfter - start) * RENEW_AT_MAX ? 'expiring' : 'valid'
}

/** What the poollet does with its stored kubeconfig at start. */
export type StartupIdentity =
  | {action: 'use'}
  | {action: 'bootstrap'; reason: string}
  | {action: 'fail'; reason: string}

export interface StartupInput {
  /** The stored kubeconfig's client certificate, undefined when there is no kubeconfig (or no certificate in it). */
  stored: {times: CertificateTimes; hasCertificate: true} | {hasCertificate: false; exists: boolean} | undefined
  bootstrapAvailable: boolean
  now: number
}

/**
 * The decision at start: use the stored kubeconfig when its certificate is valid (or when it
 * authenticates otherwise, e.g. by token); else bootstrap when a bootstrap kubeconfig is there; else use
 * it anyway when it exists (the API server has the last word) or fail naming what is missing.
 */
export function startupIdentity(input: StartupInput): StartupIdentity {
  const stored = input.stored
  if (stored === undefined || (!stored.hasCertificate && !stored.exists)) {
    return input.bootstrapAvailable ? {action: 'bootstrap', reason: 'no kubeconfig yet'} : {action: 'fail', reason: 'no kubeconfig, and no bootstrap kubeconfig to request one'}
  }
  if (!stored.hasCertificate) return {action: 'use'}
  const state = certificateState(stored.times, input.now)
  if (state === 'valid') return {action: 'use'}
  const reason = `its client certificate is ${state === 'expiring' ? 'about to expire' : state.replaceAll('-', ' ')} (valid ${new Date(stored.times.notBefore).toISOString()} to ${new Date(stored.times.notAfter).toISOString()})`
  if (input.bootstrapAvailable) return {action: 'bootstrap', reason}
  // Expiring: still works for now; expired or not yet valid: the API server will refuse it and say so.
  return {action: 'use'}
}
