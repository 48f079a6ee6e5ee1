/**
 * kube-apiserver's audit log for chosen users, so a test counts exactly what one client asked of the
 * API (metrics have no user label). Every request of those users is logged at Metadata level, denied
 * ones included: a write refused by RBAC is still a write the client tried.
 */
import {readFileSync} from 'node:fs'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'

export interface AuditLog {
  apiServerArgs: string[]
  /** Requests of a user, one per auditID, as "verb resource[/subresource]" with their count. */
  requests(username: string): Map<string, number>
  /** The write requests of a user, one per auditID, as "verb resource[/subresource] namespace/name". */
  writes(username: string): string[]
}

interface AuditEvent {
  auditID: string
  verb: string
  objectRef?: {resource?: string; subresource?: string; namespace?: string; name?: string}
  user?: {username?: string}
}

export async function auditUsers(dir: string, usernames: readonly string[]): Promise<AuditLog> {
  const policyFile = path.join(dir, 'audit-policy.json')
  const logFile = path.join(dir, 'audit.log')
  await writeFile(policyFile, JSON.stringify({apiVersion: 'audit.k8s.io/v1', kind: 'Policy', omitStages: ['RequestReceived'], rules: [{level: 'Metadata', users: [...usernames]}, {level: 'None'}]}))
  const events = (username: string) => {
    const seen = new Set<string>()
    return readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as AuditEvent)
      .filter((event) => event.user?.username === username && !seen.has(event.auditID) && seen.add(event.auditID))
  }
  return {
    writes: (username) =>
      events(username)
        .filter((e) => WRITE_VERBS.includes(e.verb))
        .map((e) => `${e.verb} ${e.objectRef?.resource ?? '?'}${e.objectRef?.subresource === undefined ? '' : `/${e.objectRef.subresource}`} ${e.objectRef?.namespace ?? ''}/${e.objectRef?.name ?? ''}`),
    apiServerArgs: [`--audit-policy-file=${policyFile}`, `--audit-log-path=${logFile}`, '--audit-log-format=json', '--audit-log-mode=blocking'],
    requests(username) {
      const seen = new Set<string>()
      const counts = new Map<string, number>()
      for (const line of readFileSync(logFile, 'utf8').split('\n')) {
        if (line === '') continue
        const event = JSON.parse(line) as AuditEvent
        if (event.user?.username !== username || seen.has(event.auditID)) continue
        seen.add(event.auditID)
        const ref = event.objectRef ?? {}
        const key = `${event.verb} ${ref.resource ?? '?'}${ref.subresource === undefined ? '' : `/${ref.subresource}`}`
        counts.set(key, (counts.get(key) ?? 0) + 1)
      }
      return counts
    },
  }
}

/** The write verbs of the API. */
export const WRITE_VERBS = ['create', 'update', 'patch', 'delete', 'deletecollection']
