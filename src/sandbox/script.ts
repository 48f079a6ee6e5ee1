/**
 * The `--script` format: one step per line, for tests and demos. Parsed before anything starts, so a
 * typo costs nothing; every bad line is reported at once with its number.
 *
 *   # a comment; blank lines are skipped
 *   [WHEN] ACTION [POOL]          WHEN: `2s` after the script began, `+2s` after the previous step;
 *                                 none: right after the previous step
 *   stop|start POOL               the poollet process (SIGTERM; start it again)
 *   freeze|thaw POOL              SIGSTOP / SIGCONT to the poollet's process group
 *   fail|hang|recover POOL        the pool's runtime: UNAVAILABLE errors, no answer, answers again
 *   wait-ready [N] [within D]     until N pools (default: all) are Ready=True
 *   wait POOL STATUS [within D]   until the pool's Ready is STATUS (True, False or Unknown)
 *   quit                          tear down and exit (so does the script's end)
 *
 * A wait gives up after D (default 60s) and the sandbox exits 1.
 */
import {parseDuration, errorMessage} from '../core/index.ts'
import {isAction, type Action} from './pool-actor.ts'

export const DEFAULT_WAIT_MS = 60_000
export const READY_STATUSES = ['True', 'False', 'Unknown'] as const
export type ReadyStatus = (typeof READY_STATUSES)[number]

export type StepAction =
  | {type: 'act'; action: Action; pool: string}
  | {type: 'wait-ready'; count?: number; withinMs: number}
  | {type: 'wait'; pool: string; status: ReadyStatus; withinMs: number}
  | {type: 'quit'}

export interface ScriptStep {
  line: number
  text: string
  /** When to start: ms after the script began, or (relative) after the previous step ended. */
  at?: {ms: number; relative: boolean}
  step: StepAction
}

export type ScriptParse = {ok: true; steps: ScriptStep[]} | {ok: false; errors: string[]}

const WHEN = /^\+?(\d|\.\d)[\dA-Za-zµμ.]*$/

/** Parses a script; `pools` are the names the sandbox will run, so a step can only name one of them. */
export function parseScript(source: string, pools: readonly string[]): ScriptParse {
  const steps: ScriptStep[] = []
  const errors: string[] = []
  source.split(/\r?\n/).forEach((raw, index) => {
    const text = raw.replace(/#.*/, '').trim()
    if (text === '') return
    try {
      steps.push({line: index + 1, text, ...parseLine(text, pools)})
    } catch (error) {
      errors.push(`line ${index + 1} ${JSON.stringify(text)}: ${errorMessage(error)}`)
    }
  })
  return errors.length > 0 ? {ok: false, errors} : {ok: true, steps}
}

function parseLine(text: string, pools: readonly string[]): Omit<ScriptStep, 'line' | 'text'> {
  let words = text.split(/\s+/)
  let at: ScriptStep['at']
  if (WHEN.test(words[0] ?? '')) {
    const when = words[0] ?? ''
    at = {ms: parseDuration(when.replace(/^\+/, '')), relative: when.startsWith('+')}
    words = words.slice(1)
  }
  const [verb = '', ...args] = words
  // `within D` may end either wait.
  let withinMs = DEFAULT_WAIT_MS
  if (args.length >= 2 && args[args.length - 2] === 'within') {
    withinMs = parseDuration(args[args.length - 1] ?? '')
    args.splice(-2)
  }
  const pool = (word: string | undefined): string => {
    if (word === undefined) throw new Error('names no pool')
    if (!pools.includes(word)) throw new Error(`no pool ${JSON.stringify(word)}; the pools are ${pools.join(', ')}`)
    return word
  }
  const arity = (n: number) => {
    if (args.length > n) throw new Error(`unexpected ${JSON.stringify(args.slice(n).join(' '))}`)
  }
  if (isAction(verb)) {
    arity(1)
    return {at, step: {type: 'act', action: verb, pool: pool(args[0])}}
  }
  switch (verb) {
    case 'wait-ready': {
      arity(1)
      const count = args[0] === undefined ? undefined : Number(args[0])
      if (count !== undefined && !(Number.isInteger(count) && count >= 0 && count <= pools.length)) {
        throw new Error(`wait-ready takes a count from 0 to ${pools.length}`)
      }
      return {at, step: {type: 'wait-ready', count, withinMs}}
    }
    case 'wait': {
      arity(2)
      const status = args[1] ?? ''
      if (!(READY_STATUSES as readonly string[]).includes(status)) throw new Error(`wait POOL STATUS: STATUS is one of ${READY_STATUSES.join(', ')}`)
      return {at, step: {type: 'wait', pool: pool(args[0]), status: status as ReadyStatus, withinMs}}
    }
    case 'quit':
      arity(0)
      return {at, step: {type: 'quit'}}
    default:
      throw new Error(`unknown step ${JSON.stringify(verb)}; steps: stop, start, freeze, thaw, fail, hang, recover, wait-ready, wait, quit`)
  }
}
