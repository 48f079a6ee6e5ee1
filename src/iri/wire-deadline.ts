/**
 * A call's deadline on the wire: the `grpc-timeout` header, as a Go client's context deadline travels
 * (IronCore's heartbeat). The runtime (grpc-js, grpc-go) then knows the deadline and can end its own
 * work on time; unary-channel.ts sends it with every call and also enforces it locally.
 */

/** The gRPC spec allows at most eight digits before the unit. */
const MAX_VALUE = 99_999_999

/** A relative timeout in ms as a grpc-timeout value: milliseconds, or whole seconds when too long for eight digits. */
export function grpcTimeout(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms))
  if (whole <= MAX_VALUE) return `${whole}m`
  return `${Math.min(Math.ceil(whole / 1000), MAX_VALUE)}S`
}
