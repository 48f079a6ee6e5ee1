/**
 * `pool status` rows from the core's pool view: the table cells (plain or wide) and the skew notes.
 * The JSON and YAML output is the view itself, so a script sees the same fields the table is made of.
 */
import {formatAge, type PoolView} from '../../core/index.ts'
import {readyPaint} from '../colour.ts'
import type {CellInput} from '../table.ts'

export const STATUS_HEADERS = ['NAME', 'KIND', 'READY', 'REASON', 'SINCE', 'HOLDER', 'RENEWED', 'LEASE', 'EXPIRED'] as const
export const WIDE_HEADERS = [...STATUS_HEADERS, 'MESSAGE', 'NOTES'] as const

/** Marks an age computed from a timestamp that lies in the future (see the notes). */
export const SKEW_MARK = '!'

const NONE = '<none>'

/** The EXPIRED column: judged on the local clock, so display only. */
export function expiredText(view: PoolView): string {
  switch (view.lease) {
    case 'valid':
      return 'no'
    case 'expired':
      return 'yes'
    case 'missing':
      return '<no lease>'
    case 'no-renew':
      return '<never renewed>'
  }
}

function skewed(view: PoolView, field: string): boolean {
  return view.skew.some((note) => note.startsWith(field))
}

export function statusCells(view: PoolView, options: {wide?: boolean; colour?: boolean} = {}): CellInput[] {
  const since = formatAge(view.sinceMs) + (skewed(view, 'Ready') ? SKEW_MARK : '')
  const renewed = formatAge(view.renewedMs) + (skewed(view, 'Lease') ? SKEW_MARK : '')
  const cells: CellInput[] = [
    view.name,
    view.kind,
    {text: view.ready, paint: readyPaint(view.ready, options.colour ?? false)},
    view.reason || NONE,
    since,
    view.holder ?? NONE,
    renewed,
    view.leaseDurationSeconds === undefined ? NONE : `${view.leaseDurationSeconds}s`,
    expiredText(view),
  ]
  if (options.wide) cells.push(view.message || NONE, [...view.skew, ...view.notes].join('; ') || NONE)
  return cells
}

/** Footnotes for a plain table (wide shows them in NOTES): one line per skewed timestamp, one per other note. */
export function skewNotes(views: readonly PoolView[]): string[] {
  return views.flatMap((view) => [
    ...view.skew.map((note) => `${SKEW_MARK} ${view.kind}pool ${view.name}: ${note}; its ages are display only`),
    ...view.notes.map((note) => `${view.kind}pool ${view.name}: ${note}`),
  ])
}
