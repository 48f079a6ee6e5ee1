/**
 * Runs a parsed script against a running sandbox: each step at its time, each announced on a line of
 * its own, waits judged on the watch caches' picture (the same one the view shows).
 */
import {delay} from 'abort-controller-x'
import {formatDuration} from '../core/index.ts'
import type {PoolActor} from './pool-actor.ts'
import type {PoolBoard} from './pool-board.ts'
import type {ScriptStep, StepAction} from './script.ts'

export interface ScriptContext {
  board: PoolBoard
  actors: ReadonlyMap<string, PoolActor>
  /** Prints one line, stamped with the sandbox's elapsed time. */
  say: (line: string) => void
  signal: AbortSignal
}

export class ScriptTimeoutError extends Error {
  override readonly name = 'ScriptTimeoutError'
}

/** Resolves when the script has ended or quit; rejects with ScriptTimeoutError when a wait gives up. */
export async function runScript(steps: readonly ScriptStep[], ctx: ScriptContext): Promise<void> {
  const began = performance.now()
  let previousEnd = began
  for (const {at, text, line, step} of steps) {
    if (at !== undefined) {
      const due = (at.relative ? previousEnd : began) + at.ms
      await delay(ctx.signal, Math.max(0, due - performance.now()))
    }
    ctx.say(`script: ${text}`)
    if (step.type === 'quit') return
    if (!(await runStep(step, ctx))) {
      const within = step.type === 'act' ? 0 : step.withinMs
      throw new ScriptTimeoutError(`script line ${line} "${text}" gave up after ${formatDuration(within)}`)
    }
    previousEnd = performance.now()
  }
}

async function runStep(step: Exclude<StepAction, {type: 'quit'}>, ctx: ScriptContext): Promise<boolean> {
  const {board} = ctx
  switch (step.type) {
    case 'act': {
      const actor = ctx.actors.get(step.pool)
      await actor?.act(step.action)
      // A new process group: named, so that whoever checks the teardown knows of it.
      if (step.action === 'start' && actor?.poollet.pid !== undefined) ctx.say(`pid ${actor.poollet.name} ${actor.poollet.pid}`)
      return true
    }
    case 'wait-ready': {
      const count = step.count ?? board.pools.length
      return waitUntil(board, () => board.readyCount() >= count, step.withinMs, ctx.signal)
    }
    case 'wait': {
      const pool = board.pools.find((p) => p.name === step.pool)
      return waitUntil(board, () => pool !== undefined && board.view(pool, Date.now())?.ready === step.status, step.withinMs, ctx.signal)
    }
  }
}

/** True once the condition holds (checked now and on every board change), false after `withinMs`. */
export function waitUntil(board: PoolBoard, condition: () => boolean, withinMs: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve, reject) => {
    if (condition()) return resolve(true)
    const done = (result: boolean | Error) => {
      clearTimeout(timer)
      unsubscribe()
      signal.removeEventListener('abort', onAbort)
      if (result instanceof Error) reject(result)
      else resolve(result)
    }
    const onAbort = () => done(signal.reason instanceof Error ? signal.reason : new Error('aborted'))
    const timer = setTimeout(() => done(false), withinMs)
    const unsubscribe = board.onChange(() => {
      if (condition()) done(true)
    })
    signal.addEventListener('abort', onAbort, {once: true})
  })
}
