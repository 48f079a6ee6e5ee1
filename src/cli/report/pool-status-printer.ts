/**
 * Prints `pool status` in the format asked for. Once: a table (notes about skewed clocks on stderr), or
 * one JSON/YAML document `{pools: [...]}`. Under --watch, kubectl get -w style: the first table, then
 * one row per change under the same columns; JSON as one object per line, YAML as one document per view.
 */
import {stringify} from 'yaml'
import type {PoolView} from '../../core/index.ts'
import {STATUS_HEADERS, WIDE_HEADERS, skewNotes, statusCells} from './pool-status-rows.ts'
import {formatRow, renderTable} from '../table.ts'

export const OUTPUT_FORMATS = ['wide', 'json', 'yaml'] as const
export type OutputFormat = 'table' | (typeof OUTPUT_FORMATS)[number]

export interface PrinterOptions {
  format: OutputFormat
  /** Default true. */
  headers?: boolean
  colour?: boolean
  /** Where table rows and documents go (stdout), and where notes go (stderr). */
  out: (line: string) => void
  err: (line: string) => void
}

/** What `--json` returns and `-o json` prints. */
export interface PoolStatusResult {
  pools: PoolView[]
}

export class PoolStatusPrinter {
  private widths: number[] | undefined
  private readonly o: PrinterOptions

  constructor(options: PrinterOptions) {
    this.o = options
  }

  /** The whole list; under --watch the first print. */
  printAll(views: readonly PoolView[], watch = false): void {
    const {format} = this.o
    if (views.length === 0 && (format === 'table' || format === 'wide')) this.o.err('No pools found.')
    if (format === 'json' || format === 'yaml') {
      if (watch) views.forEach((view) => this.printChange(view))
      else this.o.out(format === 'json' ? JSON.stringify({pools: [...views]} satisfies PoolStatusResult, null, 2) : stringify({pools: views}).trimEnd())
      return
    }
    const wide = format === 'wide'
    const rows = views.map((view) => statusCells(view, {wide, colour: this.o.colour}))
    const {lines, widths} = renderTable(wide ? WIDE_HEADERS : STATUS_HEADERS, rows, {headers: this.o.headers})
    this.widths = widths
    lines.forEach(this.o.out)
    if (!wide) skewNotes(views).forEach(this.o.err)
  }

  /** One pool whose view changed, under --watch. */
  printChange(view: PoolView): void {
    const {format} = this.o
    if (format === 'json') return this.o.out(JSON.stringify(view))
    if (format === 'yaml') return this.o.out(`---\n${stringify(view).trimEnd()}`)
    const wide = format === 'wide'
    const cells = statusCells(view, {wide, colour: this.o.colour})
    this.widths ??= renderTable(wide ? WIDE_HEADERS : STATUS_HEADERS, [cells]).widths
    this.o.out(formatRow(cells, this.widths))
    if (!wide) skewNotes([view]).forEach(this.o.err)
  }
}
