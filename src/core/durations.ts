/**
 * Durations as Go writes them (`10s`, `1m30s`, `500ms`, `1.5h`), the form Kubernetes and IronCore
 * flags use, so an operator can copy a value from one to the other. Unlike Go's time.ParseDuration,
 * negative durations are refused: no ironpool setting means anything below zero.
 */

const NS_PER_UNIT: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1e3,
  µs: 1e3, // U+00B5 micro sign, as Go writes it
  μs: 1e3, // U+03BC Greek mu, which Go accepts too
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
}

const NS_PER_MS = 1e6

/** One number (integer part, fraction) and its unit, repeated: "1m30s", "1.5h", ".5s". */
const PART = /(\d*)(?:\.(\d*))?([^\d.]*)/y

/** Why a text is not a duration; the message quotes the text, as Go's does. */
export class DurationSyntaxError extends Error {
  override readonly name = 'DurationSyntaxError'
}

/**
 * Milliseconds (possibly fractional, for µs and ns) in a Go duration. "0" alone needs no unit, as in
 * Go; any other bare number is refused, since "10" could mean 10 s or 10 ms.
 */
export function parseDuration(text: string): number {
  const invalid = (why: string) => new DurationSyntaxError(`${why} in duration ${JSON.stringify(text)}`)
  if (text === '0') return 0
  if (text === '') throw invalid('empty')
  if (text.startsWith('-')) throw invalid('negative value')
  // Sum whole nanoseconds, as Go does, so that "1.1s" is 1100 ms and not 1100.0000000000002.
  let ns = 0
  PART.lastIndex = 0
  const body = text.startsWith('+') ? text.slice(1) : text
  while (PART.lastIndex < body.length) {
    const match = PART.exec(body)
    const [, whole = '', fraction, unit = ''] = match ?? []
    if (match === null || (whole === '' && !fraction)) throw invalid('invalid number')
    if (unit === '') throw invalid('missing unit')
    const perUnit = NS_PER_UNIT[unit]
    if (perUnit === undefined) throw invalid(`unknown unit ${JSON.stringify(unit)}`)
    ns += Number(whole || '0') * perUnit + Math.round(Number(`0.${fraction ?? ''}`) * perUnit)
    if (!Number.isSafeInteger(ns)) throw invalid('value out of range')
  }
  if (body === '') throw invalid('invalid number')
  return ns / NS_PER_MS
}

/**
 * The shortest Go-style text for ms: hours, minutes and seconds with zero parts left out ("1h", "1m30s",
 * "1.5s"), and below one second ms, µs or ns ("500ms"). parseDuration reads it back to the same value.
 */
export function formatDuration(ms: number): string {
  let ns = Math.round(ms * NS_PER_MS)
  if (ns === 0) return '0s'
  const sign = ns < 0 ? '-' : ''
  ns = Math.abs(ns)
  if (ns < 1e9) {
    if (ns >= 1e6) return `${sign}${decimal(ns, 1e6)}ms`
    if (ns >= 1e3) return `${sign}${decimal(ns, 1e3)}µs`
    return `${sign}${ns}ns`
  }
  const hours = Math.floor(ns / 3600e9)
  const minutes = Math.floor((ns % 3600e9) / 60e9)
  const rest = ns % 60e9
  return `${sign}${hours ? `${hours}h` : ''}${minutes ? `${minutes}m` : ''}${rest ? `${decimal(rest, 1e9)}s` : ''}`
}

/** value / unit, written exactly with the fraction's trailing zeros dropped. */
function decimal(value: number, unit: number): string {
  const whole = Math.floor(value / unit)
  const fraction = String(value % unit)
    .padStart(String(unit).length - 1, '0')
    .replace(/0+$/, '')
  return fraction ? `${whole}.${fraction}` : String(whole)
}
