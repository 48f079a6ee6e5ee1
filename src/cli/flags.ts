/**
 * Flags that `ironpool poollet` and `ironpool controller` share, and the one rule every ironpool flag
 * follows: an environment fallback named IRONPOOL_<FLAG_NAME_UPPER_SNAKE>. Flag names are the keys of
 * a command's flags object, so the env name is filled in there, by withEnv, and no flag can forget it.
 *
 * Exit codes: oclif 5 exits 2 for its own parse errors (unknown flag, value not among the options,
 * missing required flag: every CLIError without an explicit code), and these flags' parse errors are
 * CLIErrors too. Plain errors would exit 1, so nothing here throws one at parse time.
 */
import {Errors, Flags} from '@oclif/core'
import type {OptionFlag} from '@oclif/core/interfaces'
import {formatDuration, parseDuration, errorMessage} from '../core/index.ts'
import {BindAddressError, parseBindAddress, type BindAddress} from '../observe/bind-address.ts'
import {LOG_FORMATS, LOG_LEVELS} from '../observe/log-options.ts'

export const ENV_PREFIX = 'IRONPOOL_'

/** Exit code for bad usage, as oclif's parse errors and Go's flag package use. */
export const USAGE_EXIT_CODE = 2

/** `heartbeat-interval` → `IRONPOOL_HEARTBEAT_INTERVAL`. */
export function envName(flagName: string): string {
  return ENV_PREFIX + flagName.replace(/-/g, '_').toUpperCase()
}

/**
 * The flags with `env` set from each key. A flag that already names a different variable is a
 * programming error, refused when the command module loads.
 */
export function withEnv<T extends Record<string, {env?: string | undefined}>>(flags: T): T {
  return Object.fromEntries(
    Object.entries(flags).map(([name, flag]) => {
      const env = envName(name)
      if (flag.env !== undefined && flag.env !== env) throw new Error(`flag --${name} has env ${flag.env}; ironpool flags use ${env}`)
      return [name, {...flag, env}]
    }),
  ) as T
}

/** Where a bad value came from, for messages: the flag, or the variable standing in for it. */
function source(flag: {name: string; env?: string | undefined}, fromCommandLine: boolean): string {
  return fromCommandLine || flag.env === undefined ? `--${flag.name}` : `--${flag.name} (from ${flag.env})`
}

/** Milliseconds in a duration flag's value, or a usage error naming the flag and the value. */
export function parseDurationValue(text: string, from: string): number {
  try {
    return parseDuration(text)
  } catch (error) {
    throw new Errors.CLIError(`${from} ${JSON.stringify(text)} is not a duration (${errorMessage(error)}); write e.g. 10s, 1m30s, 500ms`, {exit: USAGE_EXIT_CODE})
  }
}

/** The bind address, undefined for off, or a usage error naming the flag. */
export function parseBindAddressValue(text: string, from: string): BindAddress | undefined {
  try {
    return parseBindAddress(text)
  } catch (error) {
    if (!(error instanceof BindAddressError)) throw error
    throw new Errors.CLIError(`${from} ${error.message}`, {exit: USAGE_EXIT_CODE})
  }
}

/** fn's result as a promise, its throw as a rejection (oclif's parse hooks return promises). */
function settle<T>(fn: () => T): Promise<T> {
  return new Promise((resolve) => resolve(fn()))
}

interface BaseOptions {
  description: string
  summary?: string
  helpGroup?: string
  hidden?: boolean
}

const duration = Flags.custom<number>({
  helpValue: '<duration>',
  // oclif passes no token when the value came from the environment.
  parse: (input, context, flag) => settle(() => parseDurationValue(input, source(flag, context.token !== undefined))),
})

/** A Go-style duration (`10s`, `1m30s`, `500ms`) in milliseconds; the default is given in ms too. */
export function durationFlag(options: BaseOptions & {default: number}): OptionFlag<number>
export function durationFlag(options: BaseOptions & {required: true}): OptionFlag<number>
export function durationFlag(options: BaseOptions): OptionFlag<number | undefined>
export function durationFlag(options: BaseOptions & {default?: number; required?: boolean}): OptionFlag<number | undefined> {
  const ms = options.default
  return duration({...options, defaultHelp: ms === undefined ? undefined : () => Promise.resolve(formatDuration(ms))})
}

const bindAddress = Flags.custom<BindAddress>({
  helpValue: '<[host]:port>',
  parse: (input, context, flag) => settle(() => parseBindAddressValue(input, source(flag, context.token !== undefined))),
})

/** A listen address (`:8080`, `127.0.0.1:0`); `0` or empty is off, which reads as undefined. */
export function bindAddressFlag(options: BaseOptions & {default: string}): OptionFlag<BindAddress | undefined> {
  const text = options.default
  return bindAddress({
    ...options,
    default: parseBindAddressValue(text, 'default'),
    defaultHelp: () => Promise.resolve(text),
  })
}

export function kubeconfigFlag(): OptionFlag<string | undefined> {
  return Flags.string({description: 'Path to a kubeconfig. Default: in-cluster configuration, then $KUBECONFIG, then ~/.kube/config.'})
}

/** --log-level and --log-format, which every long-running command takes. */
export function loggingFlags() {
  return {
    'log-level': Flags.option({options: LOG_LEVELS, default: 'info' as const, description: 'Lowest level logged.'})(),
    'log-format': Flags.option({
      options: LOG_FORMATS,
      default: 'auto' as const,
      description: 'Log line format on stderr: json, text (pretty), or auto (text on a terminal, json otherwise).',
    })(),
  }
}

/** The part of an oclif Command that reports a usage error. */
export interface UsageErrorReporter {
  error(message: string, options: {exit: number}): never
}

/**
 * Refuses the start with every validation error at once (each already names its flag and rule), so
 * the user fixes them in one go; exits 2 like oclif's own parse errors.
 */
export function failUsage(command: UsageErrorReporter, errors: readonly string[]): never {
  const body = errors.length === 1 ? errors[0] : `${errors.length} invalid flag values:\n${errors.map((e) => `  - ${e}`).join('\n')}`
  command.error(`${body}\nSee more help with --help`, {exit: USAGE_EXIT_CODE})
}
