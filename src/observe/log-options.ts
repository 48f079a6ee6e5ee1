/** The values of --log-level and --log-format (logger.ts), in a module of their own, free of pino. */

/** The levels ironpool speaks; pino's trace and fatal are left out so flags offer only what is used. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export const LOG_FORMATS = ['json', 'text', 'auto'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]
