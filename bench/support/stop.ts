import type {CliProcess} from '../../test/support/cli.ts'

/** SIGTERM should end an ironpool process within seconds (issues 3 and 4); past this, SIGKILL, so nothing is left behind. */
const STOP_TIMEOUT_MS = 10_000

export async function stopProcess(cli: CliProcess): Promise<void> {
  const timer = setTimeout(() => cli.child.kill('SIGKILL'), STOP_TIMEOUT_MS)
  try {
    await cli.stop('SIGTERM')
  } finally {
    clearTimeout(timer)
  }
}
