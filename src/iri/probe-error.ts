/**
 * Translates what a probe call threw into the core's terms. The text becomes the message of the
 * pool's Ready=False condition, so it names the call, the gRPC status and the runtime's own detail.
 */
import {isAbortError} from 'abort-controller-x'
import {ClientError, Status} from 'nice-grpc-common'
import {ProbeError, errorMessage} from '../core/index.ts'

/**
 * A ProbeError for a failed call to path. An abort is passed through unchanged: it means the
 * caller gave up (shutdown), which says nothing about the runtime's health.
 */
export function toProbeError(path: string, error: unknown): Error {
  if (isAbortError(error)) return error
  if (error instanceof ClientError) {
    return new ProbeError(`${error.path} ${Status[error.code]}: ${tidyDetail(error.details)}`, {cause: error})
  }
  return new ProbeError(`${path}: ${errorMessage(error)}`, {cause: error})
}

/**
 * grpc-js wraps a failed connect as "No connection established. Last error: Error: connect ENOENT
 * /x.sock. Resolution note: " (the note is usually empty). Operators read this in the pool's Ready
 * message, so keep the cause and the note, drop the wrapping. Other details pass unchanged; if
 * grpc-js changes the wording, this stops matching and the raw text shows, which is still correct.
 */
const NO_CONNECTION = /^No connection established\. Last error: (?:Error: )?(.*?)\.? Resolution note: ?(.*)$/s

export function tidyDetail(details: string): string {
  const match = NO_CONNECTION.exec(details)
  if (match === null) return details
  const [, cause = '', note = ''] = match
  return note.trim() === '' ? cause : `${cause} (${note.trim()})`
}
