/**
 * Plain output for scripts, pipes and tests: one line per change of a pool's Ready status or reason
 * (`<time> <pool> Ready=<status> <reason>`), the pools' first state included; renewals and ages, which
 * change every heartbeat, are left out so a reader sees only what happened.
 */
import type {PoolBoard} from './pool-board.ts'

export function printReadyChanges(board: PoolBoard, say: (line: string) => void): () => void {
  const last = new Map<string, string>()
  const check = () => {
    for (const pool of board.pools) {
      const view = board.view(pool, Date.now())
      if (view === undefined) continue
      const line = `${pool.name} Ready=${view.ready} ${view.reason || '<none>'}`
      if (last.get(pool.name) === line) continue
      last.set(pool.name, line)
      say(line)
    }
  }
  check()
  return board.onChange(check)
}

/** Calls back once, the first time every pool is Ready=True. */
export function onceAllReady(board: PoolBoard, callback: () => void): () => void {
  let unsubscribe = () => {}
  const check = () => {
    if (board.readyCount() < board.pools.length) return false
    unsubscribe()
    callback()
    return true
  }
  if (!check()) unsubscribe = board.onChange(check)
  return () => unsubscribe()
}
