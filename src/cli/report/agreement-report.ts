/** `dry-run report` as an operator reads it: the agreement in one line, then each pool paired or not. */
import {stringify} from 'yaml'
import {formatDuration, type Agreement, type MarkSighting} from '../../core/index.ts'
import {renderTable} from '../table.ts'

const iso = (at: number) => new Date(at).toISOString()
const signed = (ms: number) => `${ms < 0 ? '-' : '+'}${formatDuration(Math.abs(Math.round(ms)))}`

/** The report as plain JSON (times RFC 3339). */
export function agreementDocument(a: Agreement) {
  const sighting = (s: MarkSighting) => ({kind: s.kind, pool: s.pool, ...(s.uid === undefined ? {} : {uid: s.uid}), at: iso(s.at)})
  return {
    windowMs: a.windowMs,
    agreed: a.agreed.length,
    onlyMarked: a.onlyMarked.length,
    onlyWouldMark: a.onlyWouldMark.length,
    ratio: a.ratio,
    maxAbsDeltaMs: a.maxAbsDeltaMs,
    pools: [
      ...a.agreed.map((p) => ({kind: p.kind, pool: p.pool, markedAt: iso(p.markedAt), wouldMarkAt: iso(p.wouldMarkAt), deltaMs: p.deltaMs})),
      ...a.onlyMarked.map((s) => ({...sighting(s), only: 'marked' as const})),
      ...a.onlyWouldMark.map((s) => ({...sighting(s), only: 'would-mark' as const})),
    ],
  }
}

export function agreementText(a: Agreement): string[] {
  const rows = [
    ...a.agreed.map((p) => [p.kind, p.pool, iso(p.markedAt), iso(p.wouldMarkAt), signed(p.deltaMs)]),
    ...a.onlyMarked.map((s) => [s.kind, s.pool, iso(s.at), '-', 'marked only']),
    ...a.onlyWouldMark.map((s) => [s.kind, s.pool, '-', iso(s.at), 'dry run only']),
  ]
  const summary = `${a.agreed.length} agreed, ${a.onlyMarked.length} marked only by the controller in charge, ${a.onlyWouldMark.length} only by the dry run (within ${formatDuration(a.windowMs)}); agreement ${(a.ratio * 100).toFixed(1)} %, largest gap ${formatDuration(Math.round(a.maxAbsDeltaMs))}`
  return [...(rows.length === 0 ? [] : renderTable(['KIND', 'POOL', 'MARKED', 'WOULD MARK', 'DRY RUN'], rows).lines), summary]
}

export function agreementOutput(a: Agreement, format: 'text' | 'json' | 'yaml'): string {
  if (format === 'json') return JSON.stringify(agreementDocument(a), null, 2)
  if (format === 'yaml') return stringify(agreementDocument(a)).trimEnd()
  return agreementText(a).join('\n')
}
