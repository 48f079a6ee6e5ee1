/** A Logger that keeps what it was told, for assertions on level, message and fields. */
import type {Logger} from '../../src/core/ports.ts'

export type Level = 'debug' | 'info' | 'warn' | 'error'

export interface LogEntry {
  level: Level
  obj: Record<string, unknown>
  msg: string
}

export class FakeLogger implements Logger {
  readonly entries: LogEntry[] = []

  debug(obj: object, msg: string): void {
    this.push('debug', obj, msg)
  }
  info(obj: object, msg: string): void {
    this.push('info', obj, msg)
  }
  warn(obj: object, msg: string): void {
    this.push('warn', obj, msg)
  }
  error(obj: object, msg: string): void {
    this.push('error', obj, msg)
  }

  /** The entries at one level. */
  at(level: Level): LogEntry[] {
    return this.entries.filter((e) => e.level === level)
  }

  private push(level: Level, obj: object, msg: string): void {
    this.entries.push({level, obj: {...obj}, msg})
  }
}
