/**
 * Health as a map of named checks, answered as controller-runtime's healthz handler answers
 * (pkg/healthz/healthz.go), which kubelet probes and people with curl already know:
 *
 *   GET /readyz            200 "ok" when every check passes; otherwise 500 and one line per check
 *   GET /readyz?verbose    the per-check lines even when all pass
 *   GET /readyz?exclude=a  skip check a (repeatable)
 *   GET /readyz/<name>     that check alone: 200 "ok", or 500 "internal server error: <reason>"
 *
 * The aggregate withholds reasons, as Kubernetes does, because the endpoint may be reachable by anyone
 * on the pod network; the reason is logged and served on the per-check path.
 */
import {errorMessage, type Logger} from '../core/index.ts'

/** Resolves when healthy; throws (or rejects) with the reason when not. Gets its own name for logs. */
export type HealthCheck = (name: string) => Promise<void> | void

/** Read on every request, so a check added after the server started is served at once. */
export type HealthChecks = ReadonlyMap<string, HealthCheck>

export interface HealthResponse {
  status: number
  body: string
}

interface CheckResult {
  name: string
  error?: unknown
  excluded?: boolean
}

async function runCheck(name: string, check: HealthCheck): Promise<CheckResult> {
  try {
    await check(name)
    return {name}
  } catch (error) {
    return {name, error: error ?? new Error('check failed')}
  }
}

/**
 * Answers one request under an endpoint ("healthz" or "readyz"). subpath is what follows
 * "/<endpoint>/", or "" for the aggregate.
 */
export async function answerHealth(endpoint: string, checks: HealthChecks, subpath: string, query: URLSearchParams, logger?: Logger): Promise<HealthResponse> {
  if (subpath !== '') {
    const check = checks.get(subpath)
    if (check === undefined) return {status: 404, body: `no ${endpoint} check named ${JSON.stringify(subpath)}\n`}
    const result = await runCheck(subpath, check)
    if (result.error === undefined) return {status: 200, body: 'ok'}
    logger?.info({endpoint, check: subpath, err: errorMessage(result.error)}, `${endpoint} check failed`)
    return {status: 500, body: `internal server error: ${errorMessage(result.error)}\n`}
  }

  const unknownExcludes = new Set(query.getAll('exclude'))
  // Checks run side by side, so the answer takes as long as the slowest check, not their sum.
  const results = await Promise.all(
    [...checks].map(([name, check]): Promise<CheckResult> => {
      if (unknownExcludes.delete(name)) return Promise.resolve({name, excluded: true})
      return runCheck(name, check)
    }),
  )
  // With no checks at all there is still a process answering, which is what controller-runtime's "ping" says.
  if (checks.size === 0) results.push({name: 'ping'})
  results.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))

  const failed = results.filter((r) => r.error !== undefined)
  if (failed.length === 0 && !query.has('verbose')) return {status: 200, body: 'ok'}

  const lines = results.map((r) => (r.excluded ? `[+]${r.name} excluded: ok` : r.error === undefined ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`))
  if (unknownExcludes.size > 0) {
    lines.push(`warn: some health checks cannot be excluded: no matches for ${[...unknownExcludes].map((n) => JSON.stringify(n)).join(',')}`)
  }
  if (failed.length > 0) {
    logger?.info({endpoint, failed: Object.fromEntries(failed.map((r) => [r.name, errorMessage(r.error)]))}, `${endpoint} check failed`)
  }
  lines.push(failed.length > 0 ? `${endpoint} check failed` : `${endpoint} check passed`)
  return {status: failed.length > 0 ? 500 : 200, body: `${lines.join('\n')}\n`}
}
