/**
 * When output is coloured, and the colours of Ready. Colour only for a person at a terminal: never in a
 * pipe or file, and never when NO_COLOR is set to anything non-empty (https://no-color.org).
 */
import {styleText} from 'node:util'
import type {ConditionStatus} from '../core/index.ts'

export function colourEnabled(stream: {isTTY?: boolean}, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && (env.NO_COLOR ?? '') === ''
}

const READY_COLOURS = {True: 'green', False: 'red', Unknown: 'yellow'} as const

/**
 * The paint for a Ready status, or undefined when colour is off or the status has none ('None').
 * styleText is told not to check the stream itself: colourEnabled() made that decision once.
 */
export function readyPaint(status: ConditionStatus | 'None', enabled: boolean): ((text: string) => string) | undefined {
  if (!enabled || status === 'None') return undefined
  const colour = READY_COLOURS[status]
  return (text) => styleText(colour, text, {validateStream: false})
}
