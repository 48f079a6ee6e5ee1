/**
 * Finding a pool's IRI runtime, as IronCore's poollets do: the explicit flag, else the kind's
 * environment variable, else the first well-known socket that appears within a timeout.
 */
import {statSync} from 'node:fs'
import {sleep, systemClock, type Clock, type PoolKind} from '../core/index.ts'

export interface DiscoverOptions {
  kind: PoolKind
  /** The endpoint given on the command line; wins when non-empty. */
  flag?: string | undefined
  /** Where the kind's `IRI_<KIND>_RUNTIME_ENDPOINT` is read. Default: process.env. */
  env?: Readonly<Record<string, string | undefined>>
  /** How long to wait for a socket to appear. Default 20000 (IronCore's poollet waits 20s). */
  timeoutMs?: number
  /** How often to look. Default 1000. */
  pollIntervalMs?: number
  /** Stops the wait; the promise then rejects with the signal's reason. */
  signal?: AbortSignal
  /** Default: systemClock. */
  clock?: Clock
  /** Sockets to look for, in order of preference. Default: the kind's well-known sockets. */
  socketPaths?: readonly string[]
  /** Whether path is a socket now. Default: a stat of the path. */
  isSocket?: (path: string) => boolean
}

export const DEFAULT_DISCOVERY_TIMEOUT_MS = 20_000
export const DEFAULT_DISCOVERY_POLL_MS = 1000

/** The runtime endpoint as a gRPC target, e.g. `unix:///var/run/iri-machinebroker.sock`. */
export async function discoverRuntimeEndpoint(options: DiscoverOptions): Promise<string> {
  const {kind, signal} = options
  if (options.flag) return normaliseEndpoint(options.flag)
  const fromEnv = (options.env ?? process.env)[kind.runtimeEndpointEnv]
  if (fromEnv) return normaliseEndpoint(fromEnv)

  const clock = options.clock ?? systemClock
  const timeoutMs = options.timeoutMs ?? DEFAULT_DISCOVERY_TIMEOUT_MS
  const pollMs = options.pollIntervalMs ?? DEFAULT_DISCOVERY_POLL_MS
  const paths = options.socketPaths ?? kind.wellKnownSockets
  const isSocket = options.isSocket ?? isSocketNow
  const deadline = clock.monotonic() + timeoutMs
  for (;;) {
    signal?.throwIfAborted()
    const found = paths.find(isSocket)
    if (found !== undefined) return `unix://${found}`
    const left = deadline - clock.monotonic()
    if (left <= 0) {
      throw new Error(
        `no ${kind.name} runtime socket appeared within ${formatMs(timeoutMs)} (tried ${paths.join(', ')}); ` +
          `set ${kind.runtimeEndpointEnv} or pass the runtime endpoint explicitly`,
      )
    }
    await sleep(clock, Math.min(pollMs, left), signal)
  }
}

/**
 * A gRPC target from what an operator typed: a bare path becomes a unix socket target (`/a.sock` →
 * `unix:///a.sock`, `./a.sock` → `unix:./a.sock`); anything with a scheme is kept as given.
 */
export function normaliseEndpoint(endpoint: string): string {
  const trimmed = endpoint.trim()
  if (trimmed === '') throw new Error('IRI runtime endpoint is empty')
  if (trimmed.startsWith('/')) return `unix://${trimmed}`
  if (trimmed.startsWith('.')) return `unix:${trimmed}`
  return trimmed
}

function isSocketNow(path: string): boolean {
  // Synchronous on purpose: two stats a second cost nothing, and a sync check keeps each poll
  // within one clock step, which is what lets the tests drive discovery with a fake clock.
  try {
    return statSync(path).isSocket()
  } catch {
    return false
  }
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`
}
