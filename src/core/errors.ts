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

/** The runtime probe failed; the message is the text published in Ready=False. */
export class ProbeError extends Error {
  override readonly name = 'ProbeError'
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
