/**
 * The IRI runtime client: implements the core's RuntimeProbe port for any pool kind by calling the
 * kind's probe method (Status, or ListBucketClasses for buckets) over one long-lived channel.
 */
import type {PoolKind, RuntimeProbe} from '../core/index.ts'
import {normaliseEndpoint} from './endpoint.ts'
import {toProbeError} from './probe-error.ts'
import {methodPath, runtimeServiceFor} from './runtime-service.ts'
import {UnaryChannel} from './unary-channel.ts'

export interface RuntimeProbeOptions {
  /** Deadline of each probe call in ms. Default 5000, the default `--heartbeat-status-timeout`. */
  timeoutMs?: number
}

/** A RuntimeProbe that owns a gRPC channel. */
export interface RuntimeClient extends RuntimeProbe {
  /** The method path this client probes, e.g. `/machine.v1alpha1.MachineRuntime/Status`. */
  readonly method: string
  /** Closes the channel; later probes fail. */
  close(): void
}

export const DEFAULT_TIMEOUT_MS = 5000

/**
 * A probe of kind's runtime at endpoint (`unix:///path`, or a bare socket path), on one UnaryChannel
 * (unary-channel.ts says why not grpc-js). It connects lazily, so creating the client never fails
 * because the runtime is down.
 *
 * The probe succeeds when the runtime answers: the poollet uses nothing of the answer, so it is not
 * decoded, and no payload (an int64 above 2^53, a field IronCore adds or retypes) can turn a healthy
 * runtime into Ready=False.
 */
export function createRuntimeProbe(kind: PoolKind, endpoint: string, options: RuntimeProbeOptions = {}): RuntimeClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  if (!(timeoutMs > 0)) throw new RangeError(`IRI probe timeout must be > 0 ms, got ${timeoutMs}`)
  const service = runtimeServiceFor(kind)
  const call = service.methods.probe
  const method = methodPath(service, call)
  const request = call.requestType.encode(call.requestType.fromPartial({})).finish()
  // A session is dialled by the first call and again by the first call after it ended, so a runtime
  // that comes back answers the next heartbeat: no reconnect backoff to wait out.
  const channel = new UnaryChannel(normaliseEndpoint(endpoint))

  return {
    method,
    async probe(signal: AbortSignal): Promise<void> {
      try {
        await channel.call(method, request, {signal, timeoutMs})
      } catch (error) {
        throw toProbeError(method, error)
      }
    },
    close(): void {
      channel.close()
    },
  }
}
