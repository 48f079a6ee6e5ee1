/**
 * A deadline on one request to the API server. client-node sets no timeout of its own (undici's
 * default is 300 s of silence), so one unanswered request could hold a heartbeat or a controller
 * write for minutes; every request in src/kube runs under deadlineSignal() (api-request.ts).
 *
 * The deadline covers the whole exchange, headers and body: undici aborts a response body as well
 * when the request's signal fires.
 */
import {formatDuration} from '../../core/index.ts'

/** A request that got no (complete) answer within its deadline. */
export class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError'
  readonly timeoutMs: number
  constructor(timeoutMs: number) {
    super(`no answer within ${formatDuration(timeoutMs)}`)
    this.timeoutMs = timeoutMs
  }
}

/** The signal a request runs under: aborted at the deadline (with a RequestTimeoutError) or by the caller. */
export function deadlineSignal(timeoutMs: number, outer?: AbortSignal): AbortSignal {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(new RequestTimeoutError(timeoutMs)), timeoutMs)
  // A finished request leaves its timer behind; it must not keep the process alive.
  timer.unref()
  controller.signal.addEventListener('abort', () => clearTimeout(timer), {once: true})
  return outer === undefined ? controller.signal : AbortSignal.any([controller.signal, outer])
}
