/**
 * What the long-running commands (poollet, controller) share around their wiring: the kubeconfig as a
 * usage error when it cannot be loaded, and a run under the signal handler whose end becomes the exit
 * code — 0 after SIGTERM/SIGINT, 1 on a failure or a lost leader election (so a Deployment restarts it).
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {errorMessage, type Logger} from '../core/index.ts'
import {loadKubeConfig} from '../kube/http/kubeconfig.ts'
import {LeadershipLostError} from '../runtime/errors.ts'
import {setupSignalHandler} from '../runtime/signals.ts'
import {USAGE_EXIT_CODE, type UsageErrorReporter} from './flags.ts'

export function kubeConfigOrUsageError(command: UsageErrorReporter, kubeconfig: string | undefined): KubeConfig {
  try {
    return loadKubeConfig({kubeconfig})
  } catch (error) {
    command.error(`--kubeconfig: ${errorMessage(error)}`, {exit: USAGE_EXIT_CODE})
  }
}

export interface Exiter {
  exit(code: number): never
}

export async function runUntilSignalled(command: Exiter, logger: Logger, body: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const signals = setupSignalHandler({logger})
  try {
    await body(signals.signal)
  } catch (error) {
    if (error instanceof LeadershipLostError) {
      logger.error({}, 'leader election lost: exiting so that the Deployment restarts this replica')
      command.exit(1)
    }
    if (signals.signal.aborted) return
    logger.error({err: error}, errorMessage(error))
    command.exit(1)
  } finally {
    signals.dispose()
  }
}
