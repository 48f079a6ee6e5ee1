/**
 * Puts a call's deadline on the wire. nice-grpc's deadline middleware enforces a deadline only on the
 * client (a timer that cancels the call), so the runtime sees a cancel, never a deadline, unlike a Go
 * client (IronCore's heartbeat) whose context deadline travels as the `grpc-timeout` header. This
 * middleware sends that header from the same `deadline` option; the server (grpc-js, grpc-go) then
 * knows the deadline and can end its own work on time. Used before deadlineMiddleware, which still
 * enforces the deadline locally (added after it, so that it runs first).
 */
import type {CallOptions, ClientMiddleware} from 'nice-grpc-common'
import {Metadata} from 'nice-grpc-common'
import type {DeadlineOptions} from 'nice-grpc-client-middleware-deadline'

/** The gRPC spec allows at most eight digits before the unit. */
const MAX_VALUE = 99_999_999

/** A relative timeout in ms as a grpc-timeout value: milliseconds, or whole seconds when too long for eight digits. */
export function grpcTimeout(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms))
  if (whole <= MAX_VALUE) return `${whole}m`
  return `${Math.min(Math.ceil(whole / 1000), MAX_VALUE)}S`
}

export const wireDeadlineMiddleware: ClientMiddleware<DeadlineOptions> = async function* wireDeadline(call, options: CallOptions & DeadlineOptions) {
  const {deadline} = options
  if (deadline === undefined) return yield* call.next(call.request, options)
  const ms = deadline instanceof Date ? deadline.getTime() - Date.now() : deadline
  const metadata = Metadata(options.metadata)
  metadata.set('grpc-timeout', grpcTimeout(ms))
  return yield* call.next(call.request, {...options, metadata})
}
