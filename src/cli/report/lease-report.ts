/** The text of `lease inspect`: label and value per line, kubectl describe style, problems last. */
import {formatAge} from '../../core/index.ts'
import type {LeaseInspection} from './lease-inspection.ts'

const NONE = '<none>'

function lines(pairs: readonly [string, string][]): string[] {
  const width = Math.max(...pairs.map(([label]) => label.length)) + 2
  return pairs.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`)
}

function expiry(lease: Extract<LeaseInspection['lease'], {exists: true}>): string {
  if (lease.state === 'no-renew' || lease.expiresAt === undefined) return `${NONE} (never renewed, or no duration)`
  const inMs = lease.expiresInMs ?? 0
  return inMs < 0 ? `${lease.expiresAt} (expired ${formatAge(-inMs)} ago)` : `${lease.expiresAt} (in ${formatAge(inMs)}; not expired)`
}

export function leaseReport(inspection: LeaseInspection): string[] {
  const {lease, pool} = inspection
  const pairs: [string, string][] = []
  if (lease.exists) {
    pairs.push(
      ['Lease', `${lease.namespace}/${inspection.name}`],
      ['Holder', (lease.holder ?? NONE) + (lease.holder !== undefined && !lease.holderMatchesPool ? '  (does not match the pool!)' : '')],
      ['Acquired', lease.acquireTime ?? NONE],
      ['Renewed', lease.renewTime === undefined ? NONE : `${lease.renewTime} (${formatAge(lease.renewedMs)} ago)`],
      ['Duration', lease.leaseDurationSeconds === undefined ? NONE : `${lease.leaseDurationSeconds}s`],
      ['Expires', expiry(lease)],
      ['Transitions', String(lease.transitions)],
      ['ResourceVersion', lease.resourceVersion ?? NONE],
    )
  } else {
    pairs.push(['Lease', `${lease.namespace}/${inspection.name} does not exist`])
  }
  if (pool.exists) {
    pairs.push(['Pool', pool.resource])
    const since = pool.sinceMs === undefined ? '' : `, since ${formatAge(pool.sinceMs)}`
    pairs.push(['Ready', pool.ready === 'None' ? 'no Ready condition' : `${pool.ready} (${pool.reason || NONE}${since}): ${pool.message || NONE}`])
  } else {
    pairs.push(['Pool', `${pool.resource} does not exist`])
  }
  const out = lines(pairs)
  if (inspection.problems.length > 0) out.push('Problems:', ...inspection.problems.map((p) => `  - ${p}`))
  return out
}
