/**
 * The IRI runtime client: implements the core's RuntimeProbe port for any pool kind by calling the
 * kind's probe method (Status, or ListBucketClasses for buckets) over one long-lived channel.
 */
import {createChannel, createClientFactory} from 'nice-grpc'
import type {ChannelOptions} from 'nice-grpc'
import {deadlineMiddleware} from 'nice-grpc-client-middleware-deadline'
import type {PoolKind, RuntimeProbe} from '../core/index.ts'
import {normaliseEndpoint} from './endpoint.ts'
import {toProbeError} from './probe-error.ts'
import {methodPath, probeOnly, runtimeServiceFor} from './runtime-service.ts'
import {wireDeadlineMiddleware} from './wire-deadline.ts'

export interface RuntimeProbeOptions {
  /** Deadline of each probe call in ms. Default 5000, the default `--heartbeat-status-timeout`. */
  timeoutMs?: number
  /** gRPC channel options, merged over {@link DEFAULT_CHANNEL_OPTIONS}. */
  channelOptions?: ChannelOptions
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
 * grpc-js backs off reconnecting up to 120s by default, and while it backs off, calls fail at once
 * with UNAVAILABLE. A runtime that comes back should count as alive by the next heartbeat (10s by
 * default), so the backoff is capped well below the heartbeat interval.
 */
export const DEFAULT_CHANNEL_OPTIONS: ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 200,
  'grpc.max_reconnect_backoff_ms': 2000,
}

/**
 * A probe of kind's runtime at endpoint (`unix:///path`, or a bare socket path). The channel
 * connects lazily, so creating the client never fails because the runtime is down.
 *
 * The probe succeeds when the runtime answers: the poollet uses nothing of the answer, so it is not
 * decoded, and no payload (an int64 above 2^53, a field IronCore adds or retypes) can turn a healthy
 * runtime into Ready=False.
 */
export function createRuntimeProbe(kind: PoolKind, endpoint: string, options: RuntimeProbeOptions = {}): RuntimeClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  if (!(timeoutMs > 0)) throw new RangeError(`IRI probe timeout must be > 0 ms, got ${timeoutMs}`)
  const service = runtimeServiceFor(kind)
  const method = methodPath(service, service.methods.probe)
  const channel = createChannel(normaliseEndpoint(endpoint), undefined, {...DEFAULT_CHANNEL_OPTIONS, ...options.channelOptions})
  // The deadline goes on the wire (grpc-timeout) and is enforced here too; the answer is not decoded.
  // The middleware added last runs first: wireDeadline must see the deadline option before deadline strips it.
  const client = createClientFactory().use(deadlineMiddleware).use(wireDeadlineMiddleware).create(probeOnly(service), channel)

  return {
    method,
    async probe(signal: AbortSignal): Promise<void> {
      try {
        await client.probe({}, {signal, deadline: timeoutMs})
      } catch (error) {
        throw toProbeError(method, error)
      }
    },
    close(): void {
      channel.close()
    },
  }
}
