/**
 * The few `--name=value` flags a bench script takes. Bench scripts are run by hand, so a wrong flag
 * stops them at once with the list of known ones rather than silently running the defaults.
 */
import {nodeFlagWords} from '../../src/cli/ironpool-process.ts'
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

/** The --node-flags flag of a bench that starts ironpool: whose flags it replaces. */
export function nodeFlagsSpec(whose: string): {default: string; help: string} {
  return {default: '', help: `${whose} Node flags in place of bin/run.js's, space-separated, e.g. --max-semi-space-size=16; 'none' for none`}
}

/** --node-flags: undefined (bin/run.js's own) when empty, no flags for 'none', else the flags given. */
export function nodeFlagsArg(value: string): string[] | undefined {
  if (value === '') return undefined
  if (value === 'none') return []
  return nodeFlagWords(value, `--node-flags=${value}`)
}

/** A flag that takes one of a few words. */
export function oneOf<const W extends string>(flag: string, value: string, words: readonly W[]): W {
  if (!(words as readonly string[]).includes(value)) throw new Error(`--${flag}=${value}: want one of ${words.join(', ')}`)
  return value as W
}
