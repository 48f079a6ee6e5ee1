/**
 * The few `--name=value` flags a bench script takes. Bench scripts are run by hand, so a wrong flag
 * stops them at once with the list of known ones rather than silently running the defaults.
 */
import {parseDuration} from '../../src/core/durations.ts'

export type FlagSpec = Record<string, {default: string; help: string}>

export function parseArgs<S extends FlagSpec>(spec: S, argv: readonly string[] = process.argv.slice(2)): Record<keyof S, string> {
  const values = Object.fromEntries(Object.entries(spec).map(([name, flag]) => [name, flag.default])) as Record<keyof S, string>
  for (const arg of argv) {
    const match = /^--([a-z-]+)=(.*)$/.exec(arg)
    if (match === null || !(match[1]! in spec)) {
      const known = Object.entries(spec).map(([name, flag]) => `  --${name}=${flag.default}  ${flag.help}`).join('\n')
      throw new Error(`unknown argument ${arg}; known flags (with defaults):\n${known}`)
    }
    values[match[1] as keyof S] = match[2]!
  }
  return values
}

export function durationMs(flag: string, value: string): number {
  const ms = parseDuration(value)
  if (!(ms > 0)) throw new Error(`--${flag}=${value}: want a positive duration like 10s or 500ms`)
  return ms
}

export function positiveInt(flag: string, value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${flag}=${value}: want a positive integer`)
  return n
}

/**
 * --node-flags: undefined (bin/run.js's own) when empty, no flags for 'none', else the space-separated
 * flags, each a --flag, in place of bin/run.js's.
 */
export function nodeFlagsArg(value: string): string[] | undefined {
  if (value === '') return undefined
  if (value === 'none') return []
  const flags = value.split(/\s+/).filter((flag) => flag !== '')
  const odd = flags.find((flag) => !flag.startsWith('--'))
  if (odd !== undefined) throw new Error(`--node-flags=${value}: ${odd} is not a --flag`)
  return flags
}
