/**
 * The one mapping from a failure to the line an operator reads: what failed and what to check, on one
 * line, exit 1; the stack only with --debug. `pool status` and `lease inspect` both end through here,
 * so an unreachable API or a 403 reads the same in every tool.
 */
import {ForbiddenError, NotFoundError, errorMessage} from '../core/index.ts'
import {NoPoolKindServedError, ResourceNotServedError} from '../kube/stores/served-kind-errors.ts'

/** The kubeconfig could not be loaded (missing file, no cluster, unknown context). */
export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError'
}

/** A failure already phrased for the operator (a pool that does not exist, say); printed as is. */
export class OperatorError extends Error {
  override readonly name = 'OperatorError'
}

/** Where the command was talking to, for the line about an unreachable API. */
export interface ErrorContext {
  server?: string
}

/** Node's and undici's codes for "no answer from that address". */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT',
])

/** The first `code` in an error's cause chain, where Node puts the socket's failure under fetch's. */
function causeCode(error: unknown): {code: string; message: string} | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    const code = (current as {code?: unknown}).code
    if (typeof code === 'string') return {code, message: current.message}
  }
  return undefined
}

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim()

export function operatorErrorLine(error: unknown, context: ErrorContext = {}): string {
  const at = context.server ? ` at ${context.server}` : ''
  if (error instanceof KubeconfigError) return `error: ${oneLine(error.message)}; check --kubeconfig, $KUBECONFIG and --context`
  if (error instanceof ResourceNotServedError || error instanceof NoPoolKindServedError || error instanceof OperatorError) return `error: ${oneLine(error.message)}`
  if (error instanceof ForbiddenError) {
    const unauthorised = error.message.includes('(401)')
    const check = unauthorised
      ? "check the credentials in the kubeconfig (expired token or certificate?)"
      : "check the RBAC of the kubeconfig's identity (kubectl auth can-i)"
    return `error: ${oneLine(error.message)}; ${check}`
  }
  const cause = causeCode(error)
  if (cause !== undefined && UNREACHABLE_CODES.has(cause.code)) {
    return `error: cannot reach the Kubernetes API${at} (${cause.code}): check that the cluster is running and the kubeconfig's server address (--kubeconfig, --context)`
  }
  if (cause !== undefined && /CERT|TLS|SSL/.test(cause.code)) {
    return `error: TLS to the Kubernetes API${at} failed (${cause.code}: ${oneLine(cause.message)}): check the kubeconfig's certificate-authority`
  }
  if (error instanceof NotFoundError) return `error: ${oneLine(error.message)}; check the name and --kind`
  return `error: ${oneLine(errorMessage(error))}`
}

/** What --debug adds: the stack of the error and of each cause. */
export function debugDetail(error: unknown): string {
  const parts: string[] = []
  for (let current: unknown = error, depth = 0; current !== undefined && depth < 8; depth++) {
    parts.push(current instanceof Error ? (current.stack ?? current.message) : errorMessage(current))
    current = current instanceof Error ? current.cause : undefined
  }
  return parts.join('\ncaused by: ')
}
