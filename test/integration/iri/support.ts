/** Waiting helpers for the IRI integration tests: wait on an outcome with a deadline, never sleep. */
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

/** The promise's outcome, or a rejection naming what did not happen within ms. */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no outcome within ${ms}ms`)), ms)
  })
  try {
    return await Promise.race([promise, guard])
  } finally {
    clearTimeout(timer)
  }
}

/** Resolves once condition() holds, checking every 10ms; rejects after ms. */
export async function waitUntil(ms: number, what: string, condition: () => boolean): Promise<void> {
  let gaveUp = false
  const poll = async () => {
    while (!gaveUp && !condition()) await new Promise((resolve) => setTimeout(resolve, 10))
  }
  try {
    await within(ms, `waiting until ${what}`, poll())
  } finally {
    gaveUp = true
  }
}

/** The rejection of promise; fails when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (error) {
    if (error instanceof Error) return error
    throw new Error(`rejected with a non-Error: ${String(error)}`)
  }
  throw new Error('expected a rejection, but the promise resolved')
}

/** A fresh temp directory for sockets, and its removal. Paths stay short: unix sockets allow ~100 bytes. */
export async function socketDir(): Promise<{dir: string; remove: () => Promise<void>}> {
  const dir = await mkdtemp(join(tmpdir(), 'ironpool-iri-'))
  return {dir, remove: () => rm(dir, {recursive: true, force: true})}
}
