/**
 * What the operator tools (`pool status`, `lease inspect`) share: the connection flags, --debug, and
 * how a failure ends the command: one line on stderr, exit 1, the stack only with --debug. The line
 * goes to stderr even under --json, so stdout holds either the result or nothing.
 */
import {Flags} from '@oclif/core'
import {kubeconfigFlag} from './flags.ts'
import {debugDetail, operatorErrorLine, type ErrorContext} from './operator-errors.ts'

export function operatorFlags() {
  return {
    kubeconfig: kubeconfigFlag(),
    context: Flags.string({description: 'The kubeconfig context to use. Default: its current context.'}),
    debug: Flags.boolean({description: 'On failure, print the stack trace after the error line.', default: false}),
  }
}

/** Prints the error line (and with debug the stack) and makes the process exit 1. */
export function reportFailure(error: unknown, context: ErrorContext & {debug: boolean}, write: (text: string) => void = (t) => process.stderr.write(t)): void {
  write(`${operatorErrorLine(error, context)}\n`)
  if (context.debug) write(`${debugDetail(error)}\n`)
  process.exitCode = 1
}
