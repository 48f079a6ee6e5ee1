/** `pool why` as an operator reads it: the answer first, then the record's facts, one per line. */
import {stringify} from 'yaml'
import {formatDuration, type PoolWhy, type VerdictRecord} from '../../core/index.ts'

const ms = (n: number) => formatDuration(Math.round(n))

function recordLines(label: string, r: VerdictRecord): string[] {
  const progress = r.lastProgress
  const lease = [progress.renewTime === undefined ? 'no renewTime' : `renewTime ${progress.renewTime}`, progress.leaseResourceVersion === undefined ? undefined : `resourceVersion ${progress.leaseResourceVersion}`].filter(Boolean).join(', ')
  return [
    `${label}:`,
    `  controller:     ${r.controller}${r.dryRun ? ' (dry run)' : ''}`,
    `  state:          ${r.state}${r.hold === undefined ? '' : ` (${r.hold})`} since ${r.stateSince}`,
    `  last progress:  Lease ${lease}; Ready ${progress.readyStatus ?? 'None'}; seen at ${progress.observedAt} (the controller's clock)`,
    `  silence:        ${ms(r.silenceMs)} of a ${ms(r.gracePeriodMs)} grace period`,
    `  blind, excluded: ${ms(r.blindExcludedMs)}${r.blindReasons.length > 0 ? ` (${r.blindReasons.join(', ')})` : ''}`,
    ...(r.confirm === undefined ? [] : [`  confirming read: ${r.confirm.outcome} at ${r.confirm.at}${r.confirm.detail === undefined ? '' : ` (${r.confirm.detail})`}`]),
    ...(r.retries > 0 || r.lastError !== undefined ? [`  retries:        ${r.retries}${r.lastError === undefined ? '' : `; last error: ${r.lastError}`}`] : []),
    ...(r.breaker === undefined ? [] : [`  breaker:        ${r.breaker.tripped ? 'open' : 'closed'}, ${r.breaker.unhealthy} of ${r.breaker.total} silent`]),
    `  limiter:        ${r.limiter.queued} queued, ${r.limiter.inFlight} in flight`,
    ...(r.nextLookAt === undefined ? [] : [`  next look:      ${r.nextLookAt}`]),
    `  recorded at:    ${r.at}`,
  ]
}

export function poolWhyText(why: PoolWhy): string[] {
  const ready = `${why.ready.status}${why.ready.reason === undefined ? '' : ` (${why.ready.reason})`}${why.ready.lastTransitionTime === undefined ? '' : ` since ${why.ready.lastTransitionTime}`}`
  return [
    `pool:     ${why.kind}pool ${why.pool}${why.uid === undefined ? '' : ` (uid ${why.uid})`}`,
    `ready:    ${ready}`,
    `verdict:  ${why.verdict}`,
    `why:      ${why.summary}`,
    ...(why.heldBy === undefined ? [] : [`held by:  ${why.heldBy.what}${why.heldBy.since === undefined ? '' : ` since ${why.heldBy.since}`}`]),
    ...(why.record === undefined ? [] : recordLines('record', why.record)),
    ...(why.dryRun === undefined ? [] : recordLines('dry run', why.dryRun)),
  ]
}

export function poolWhyOutput(why: PoolWhy, format: 'text' | 'json' | 'yaml'): string {
  if (format === 'json') return JSON.stringify(why, null, 2)
  if (format === 'yaml') return stringify(why).trimEnd()
  return poolWhyText(why).join('\n')
}
