/**
 * Counting one client's API requests exactly, from kube-apiserver's audit log. apiserver_request_total
 * has no user label, and kube-apiserver renews its own identity Lease, so counting "PUT leases" there
 * would mix the poollet with the server itself; the audit log names the user of every request.
 */
import {readFileSync} from 'node:fs'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'

export interface AuditSetup {
  policyFile: string
  logFile: string
  /** Extra kube-apiserver flags. */
  apiServerArgs: string[]
}

/** One line per request for the given user (at Metadata level), nothing for anyone else. */
export async function auditOneUser(dir: string, username: string): Promise<AuditSetup> {
  return auditUsers(dir, [username])
}

/** One line per request of each of the given users (at Metadata level), nothing for anyone else. */
export async function auditUsers(dir: string, usernames: readonly string[]): Promise<AuditSetup> {
  const policyFile = path.join(dir, 'audit-policy.json')
  const logFile = path.join(dir, 'audit.log')
  const policy = {
    apiVersion: 'audit.k8s.io/v1',
    kind: 'Policy',
    // RequestReceived would count each request twice; a watch still logs ResponseStarted and ResponseComplete.
    omitStages: ['RequestReceived'],
    rules: [{level: 'Metadata', users: [...usernames]}, {level: 'None'}],
  }
  await writeFile(policyFile, JSON.stringify(policy))
  return {policyFile, logFile, apiServerArgs: [`--audit-policy-file=${policyFile}`, `--audit-log-path=${logFile}`, '--audit-log-format=json', '--audit-log-mode=blocking']}
}

interface AuditEvent {
  auditID: string
  verb: string
  requestReceivedTimestamp: string
  objectRef?: {resource?: string; subresource?: string; namespace?: string; name?: string}
  user?: {username?: string}
}

/** The log's events, of one user when username is given. */
function events(logFile: string, username?: string): AuditEvent[] {
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((event) => username === undefined || event.user?.username === username)
}

/** Requests received in [fromMs, toMs) (of one user, if given), one per auditID, counted by "verb resource[/subresource]". */
export function requestsBetween(logFile: string, fromMs: number, toMs: number, username?: string): Map<string, number> {
  const seen = new Set<string>()
  const counts = new Map<string, number>()
  for (const event of events(logFile, username)) {
    const at = Date.parse(event.requestReceivedTimestamp)
    if (at < fromMs || at >= toMs || seen.has(event.auditID)) continue
    seen.add(event.auditID)
    const ref = event.objectRef ?? {}
    const key = `${event.verb} ${ref.resource ?? '?'}${ref.subresource === undefined ? '' : `/${ref.subresource}`}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return counts
}

/** When the first request matching verb and resource (of one user, if given) was received (ms since the epoch), if any. */
export function firstRequest(logFile: string, verbs: readonly string[], resource: string, username?: string): number | undefined {
  let first: number | undefined
  for (const event of events(logFile, username)) {
    if (!verbs.includes(event.verb) || event.objectRef?.resource !== resource || event.objectRef.subresource !== undefined) continue
    const at = Date.parse(event.requestReceivedTimestamp)
    if (first === undefined || at < first) first = at
  }
  return first
}
