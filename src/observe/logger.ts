/**
 * The process logger: pino on stderr, so that stdout stays for command output and `--json`.
 * JSON lines for machines (the default when stderr is not a terminal: pods, pipes, CI), pino-pretty
 * for a person at a terminal. The result satisfies the core's Logger port by structure.
 */
import pino from 'pino'
import pretty from 'pino-pretty'
import type {DestinationStream, Logger as PinoLogger} from 'pino'
import type {Logger} from '../core/index.ts'
import type {LogFormat, LogLevel} from './log-options.ts'

// Apart from pino, so that the commands' flags load without it.
export {LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel} from './log-options.ts'

export interface LoggerOptions {
  /** Default: info. */
  level?: LogLevel
  /** Default: auto (text when the destination is a terminal, json otherwise). */
  format?: LogFormat
  /** Where lines go. Default: fd 2. A test seam; production code never sets it. */
  destination?: DestinationStream | NodeJS.WritableStream
  /** Whether the destination is a terminal, for `auto`. Default: process.stderr.isTTY. */
  isTTY?: boolean
}

export type AppLogger = PinoLogger

/** `auto` resolved: what a format option means for a destination. */
export function resolveLogFormat(format: LogFormat, isTTY: boolean): 'json' | 'text' {
  if (format !== 'auto') return format
  return isTTY ? 'text' : 'json'
}

export function createLogger(options: LoggerOptions = {}): AppLogger {
  const level = options.level ?? 'info'
  const format = resolveLogFormat(options.format ?? 'auto', options.isTTY ?? process.stderr.isTTY === true)
  // Synchronous writes: a second SIGTERM exits at once, and the line saying why must not be lost.
  const target = options.destination ?? pino.destination({dest: 2, sync: true})
  const stream: DestinationStream | NodeJS.WritableStream =
    format === 'text'
      ? pretty({destination: target, sync: true, colorize: options.destination === undefined && (options.isTTY ?? process.stderr.isTTY === true)})
      : target
  return pino(
    {
      level,
      // Level names, not numbers: the lines are read by people and by log queries alike.
      formatters: {level: (label) => ({level: label})},
      // Kubernetes-style UTC timestamps, comparable with the API server's own logs.
      timestamp: pino.stdTimeFunctions.isoTime,
      base: {pid: process.pid},
    },
    stream,
  )
}

// The core speaks to this logger through its port; the compiler keeps the two in step.
const _satisfiesPort: (logger: AppLogger) => Logger = (logger) => logger
