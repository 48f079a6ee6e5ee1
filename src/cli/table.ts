/**
 * kubectl-style tables: left-aligned columns separated by three spaces (kubectl's tabwriter padding),
 * no line ends in blanks. Widths are measured on the plain text and
 * colour is applied after padding, so escape codes never shift a column. A --watch table keeps the
 * widths of its first print, as `kubectl get -w` does: a longer value later overflows rather than
 * reflowing lines already on the screen.
 */

export interface Cell {
  text: string
  /** Styles the text after padding (colour); the width counts only `text`. */
  paint?: (text: string) => string
}

export type CellInput = string | Cell

const GAP = '   '

function cell(input: CellInput): Cell {
  return typeof input === 'string' ? {text: input} : input
}

/** The width of each column: the longest text in it, header included. */
export function columnWidths(headers: readonly string[], rows: readonly (readonly CellInput[])[]): number[] {
  return headers.map((header, i) => Math.max(header.length, ...rows.map((row) => cell(row[i] ?? '').text.length)))
}

/** One line: every cell but the last padded to its column's width. */
export function formatRow(row: readonly CellInput[], widths: readonly number[]): string {
  return row
    .map((input, i) => {
      const {text, paint} = cell(input)
      const padding = i === row.length - 1 ? '' : ' '.repeat(Math.max(0, (widths[i] ?? 0) - text.length))
      return (paint ? paint(text) : text) + padding
    })
    .join(GAP)
    .trimEnd()
}

export interface TableOptions {
  /** Default true; --no-headers turns it off. */
  headers?: boolean
}

/** The whole table as lines, and the widths it used (for rows printed later under it). */
export function renderTable(
  headers: readonly string[],
  rows: readonly (readonly CellInput[])[],
  options: TableOptions = {},
): {lines: string[]; widths: number[]} {
  const withHeaders = options.headers ?? true
  // Without the header line, its words must not widen the columns (kubectl does the same).
  const widths = columnWidths(withHeaders ? headers : headers.map(() => ''), rows)
  const lines = rows.map((row) => formatRow(row, widths))
  if (withHeaders) lines.unshift(formatRow(headers, widths))
  return {lines, widths}
}
