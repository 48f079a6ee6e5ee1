/** Prints rows as an aligned plain-text table (first row is the header), so figures paste into notes. */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths: number[] = []
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)))
  const line = (row: readonly string[]) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ')
  const [header, ...body] = rows
  if (header === undefined) return ''
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n')
}

export function printTable(title: string, rows: readonly (readonly string[])[]): void {
  process.stdout.write(`\n${title}\n${formatTable(rows)}\n`)
}

/** A number with thousands separators and at most `digits` decimals. */
export function fmt(value: number, digits = 0): string {
  return value.toLocaleString('en-US', {maximumFractionDigits: digits, minimumFractionDigits: digits})
}
