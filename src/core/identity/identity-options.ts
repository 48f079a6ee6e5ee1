/**
 * The poollet's client-identity flags, IronCore's (`utils/client/config/options.go`), with IronCore's
 * rules: a kubeconfig file or a kubeconfig Secret, not both; bootstrapping and rotation need one of
 * them to keep what they are issued in. Every error at once, each naming the flag and the rule.
 */
import {formatDuration, parseDuration} from '../durations.ts'
import {errorMessage} from '../errors.ts'
import {parseRateFlags} from '../token-bucket.ts'

export const IDENTITY_FLAGS = {
  kubeconfig: '--kubeconfig',
  secretName: '--kubeconfig-secret-name',
  secretNamespace: '--kubeconfig-secret-namespace',
  bootstrapKubeconfig: '--bootstrap-kubeconfig',
  rotateCertificates: '--rotate-certificates',
  qps: '--qps',
  burst: '--burst',
  csrTimeout: '--certificate-request-timeout',
} as const

/** controller-runtime's client defaults, which IronCore's getter applies (kube-controller-manager's 20 and 30). */
export const IDENTITY_DEFAULTS = {qps: 20, burst: 30, csrTimeoutMs: 5 * 60_000} as const

export interface IdentityInput {
  kubeconfig?: string
  secretName?: string
  secretNamespace?: string
  bootstrapKubeconfig?: string
  rotateCertificates: boolean
  /** As typed: a number, e.g. 20 or 2.5. */
  qps: string
  burst: number
  csrTimeout?: string
}

/** Where the poollet's own kubeconfig lives. */
export type KubeconfigSource = {type: 'file'; path: string} | {type: 'secret'; name: string; namespace?: string} | {type: 'default'}

export interface IdentityOptions {
  source: KubeconfigSource
  bootstrapKubeconfig?: string
  rotateCertificates: boolean
  qps: number
  burst: number
  csrTimeoutMs: number
}

export type IdentityValidation = {ok: true; options: IdentityOptions} | {ok: false; errors: string[]}

export function validateIdentityOptions(input: IdentityInput): IdentityValidation {
  const f = IDENTITY_FLAGS
  const errors: string[] = []
  if (input.kubeconfig && input.secretName) errors.push(`${f.kubeconfig} and ${f.secretName} exclude each other: the kubeconfig is kept in a file or in a Secret`)
  if (input.secretNamespace && !input.secretName) errors.push(`${f.secretNamespace} needs ${f.secretName}`)
  const store = Boolean(input.kubeconfig || input.secretName)
  if (input.bootstrapKubeconfig && !store) errors.push(`${f.bootstrapKubeconfig} needs ${f.kubeconfig} or ${f.secretName}: where the issued kubeconfig is kept`)
  if (input.rotateCertificates && !store) errors.push(`${f.rotateCertificates} needs ${f.kubeconfig} or ${f.secretName}: where the renewed kubeconfig is kept`)
  const {qps, errors: rateErrors} = parseRateFlags(input, f)
  errors.push(...rateErrors)
  let csrTimeoutMs: number = IDENTITY_DEFAULTS.csrTimeoutMs
  if (input.csrTimeout !== undefined) {
    try {
      csrTimeoutMs = parseDuration(input.csrTimeout)
      if (csrTimeoutMs <= 0) errors.push(`${f.csrTimeout} ${input.csrTimeout} must be > 0`)
    } catch (error) {
      errors.push(`${f.csrTimeout} ${JSON.stringify(input.csrTimeout)} is not a duration (${errorMessage(error)}); write e.g. ${formatDuration(IDENTITY_DEFAULTS.csrTimeoutMs)}`)
    }
  }
  if (errors.length > 0) return {ok: false, errors}
  const source: KubeconfigSource = input.kubeconfig
    ? {type: 'file', path: input.kubeconfig}
    : input.secretName
      ? {type: 'secret', name: input.secretName, namespace: input.secretNamespace || undefined}
      : {type: 'default'}
  return {ok: true, options: {source, bootstrapKubeconfig: input.bootstrapKubeconfig || undefined, rotateCertificates: input.rotateCertificates, qps, burst: input.burst, csrTimeoutMs}}
}
