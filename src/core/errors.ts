/**
 * The few error kinds the engine reacts to. Edges (src/kube, src/iri) translate foreign errors into
 * these, so the core asks "is this a conflict?" and never looks at HTTP or gRPC codes.
 */

/** The object changed since it was read (HTTP 409 on an update with a resourceVersion). */
export class ConflictError extends Error {
  override readonly name = 'ConflictError'
}

/** The object, or its type, does not exist (HTTP 404). */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError'
}

/** A create found the object already there (HTTP 409 AlreadyExists). */
export class AlreadyExistsError extends Error {
  override readonly name = 'AlreadyExistsError'
}

/** The identity may not do this (HTTP 401/403, or an admission denial). */
export class ForbiddenError extends Error {
  override readonly name = 'ForbiddenError'
}

/**
 * The API server answered and refused the request as it was (HTTP 400, 422 Invalid, a webhook's
 * 4xx denial; not 401/403/404/409 above, nor 429, which is load): an answer, not an outage.
 */
export class RejectedError extends Error {
  override readonly name = 'RejectedError'
  readonly status: number
  constructor(message: string, status: number, options?: ErrorOptions) {
    super(message, options)
    this.status = status
  }
}

/** Whether the API answered the request (it refused it): evidence that it works, not that it is away. */
export function isAnswer(error: unknown): boolean {
  return error instanceof ConflictError || error instanceof NotFoundError || error instanceof AlreadyExistsError || error instanceof ForbiddenError || error instanceof RejectedError
}

/** The runtime probe failed; the message is the text published in Ready=False. */
export class ProbeError extends Error {
  override readonly name = 'ProbeError'
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
