/** How Manager.run ends when it does not end cleanly; the command exits non-zero on each. */
import {errorMessage} from '../core/index.ts'

export class RunnableFailedError extends Error {
  override readonly name = 'RunnableFailedError'
  readonly runnable: string
  constructor(runnable: string, cause: unknown) {
    super(`${runnable}: ${errorMessage(cause)}`, {cause})
    this.runnable = runnable
  }
}

export class LeadershipLostError extends Error {
  override readonly name = 'LeadershipLostError'
  constructor() {
    super('leader election lost')
  }
}

export class ShutdownTimeoutError extends Error {
  override readonly name = 'ShutdownTimeoutError'
  readonly stillRunning: readonly string[]
  constructor(stillRunning: readonly string[], timeoutMs: number) {
    super(`runnables still running after the ${timeoutMs} ms shutdown deadline: ${stillRunning.join(', ')}`)
    this.stillRunning = stillRunning
  }
}
