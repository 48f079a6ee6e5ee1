/**
 * SIGTERM and SIGINT, as controller-runtime's signals.SetupSignalHandler treats them: the first asks
 * for a graceful stop (the returned signal aborts), the second exits at once with code 1, for the
 * operator whose shutdown is stuck.
 */
import type {Logger} from '../core/index.ts'

const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT'] as const
type ShutdownSignal = (typeof SHUTDOWN_SIGNALS)[number]

/** The part of `process` used here; a test seam. */
export interface SignalProcess {
  on(event: ShutdownSignal, listener: (signal: NodeJS.Signals) => void): unknown
  off(event: ShutdownSignal, listener: (signal: NodeJS.Signals) => void): unknown
  exit(code: number): void
}

export interface SignalHandlerOptions {
  logger?: Logger
  /** Default: the real process. */
  process?: SignalProcess
}

export interface SignalHandler {
  /** Aborts on the first SIGTERM or SIGINT, with the signal's name in its reason. */
  readonly signal: AbortSignal
  /** Removes the listeners (tests; a command keeps them until it exits). */
  dispose(): void
}

export function setupSignalHandler(options: SignalHandlerOptions = {}): SignalHandler {
  const proc = options.process ?? process
  const controller = new AbortController()
  const onSignal = (name: NodeJS.Signals) => {
    if (!controller.signal.aborted) {
      options.logger?.info({signal: name}, 'shutting down; send the signal again to exit at once')
      controller.abort(new DOMException(`received ${name}`, 'AbortError'))
      return
    }
    options.logger?.warn({signal: name}, 'second signal: exiting at once')
    proc.exit(1)
  }
  for (const name of SHUTDOWN_SIGNALS) proc.on(name, onSignal)
  return {
    signal: controller.signal,
    dispose: () => {
      for (const name of SHUTDOWN_SIGNALS) proc.off(name, onSignal)
    },
  }
}
