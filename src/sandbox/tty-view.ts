/**
 * The live view for a person at a terminal: the pool table redrawn in place whenever a watch event
 * changes it (at most every REDRAW_MS), once a second for the ages, and keys in raw mode to act on the
 * selected pool. Redrawn the way log-update does it: cursor up over the last drawing, rewrite, clear
 * the rest; lines are cut to the terminal's width, since a wrapped line would break the count.
 */
import {boardLines} from './board-table.ts'
import {decodeKeys, KEY_HELP, type KeyCommand} from './keys.ts'
import {toggle, type PoolActor} from './pool-actor.ts'
import type {PoolBoard} from './pool-board.ts'

/** Coalesces the burst of events one heartbeat round brings (a Lease and maybe a pool per poollet). */
const REDRAW_MS = 100
const AGE_TICK_MS = 1_000

export interface TtyViewOptions {
  board: PoolBoard
  actors: ReadonlyMap<string, PoolActor>
  out: NodeJS.WriteStream
  input: NodeJS.ReadStream
  /** Lines above the table (kubeconfig, export line, the controller's state), asked for at each drawing. */
  header: () => readonly string[]
  colour: boolean
  onQuit: () => void
}

export function startTtyView(o: TtyViewOptions): {stop(): void; note(message: string): void} {
  let selected = 0
  let message = ''
  let drawn = 0
  let pending: NodeJS.Timeout | undefined

  const draw = () => {
    pending = undefined
    const width = o.out.columns || 200
    const table = boardLines(o.board, o.actors, {selected, now: Date.now(), colour: o.colour})
    const lines = [...o.header(), '', ...table, '', KEY_HELP, message].map((line) => cutToWidth(line, width - 1))
    o.out.write(`${drawn > 0 ? `\x1b[${drawn}F` : ''}${lines.map((l) => `${l}\x1b[K`).join('\n')}\n\x1b[J`)
    drawn = lines.length
  }
  const schedule = () => (pending ??= setTimeout(draw, REDRAW_MS))

  const run = (command: KeyCommand) => {
    const count = o.board.pools.length
    if (command.type === 'quit') return o.onQuit()
    if (command.type === 'select') selected = Math.min(command.index, count - 1)
    else if (command.type === 'move') selected = (selected + command.delta + count) % count
    else {
      const pool = o.board.pools[selected]
      const actor = pool && o.actors.get(pool.name)
      if (actor === undefined) return
      const action = toggle(actor, command.key)
      message = `${actor.pool.name}: ${action}`
      actor.act(action).then(schedule, (error: unknown) => {
        message = `${actor.pool.name}: ${action} failed: ${String(error)}`
        schedule()
      })
    }
    schedule()
  }
  const onData = (chunk: string) => decodeKeys(chunk).forEach(run)
  // A crash must not leave the terminal in raw mode with the cursor hidden.
  const restore = () => {
    if (o.input.isTTY) o.input.setRawMode(false)
    o.out.write('\x1b[?25h')
  }

  o.input.setRawMode(true)
  o.input.setEncoding('utf8')
  o.input.on('data', onData)
  o.input.resume()
  o.out.write('\x1b[?25l')
  process.once('exit', restore)
  const unsubscribe = o.board.onChange(schedule)
  const ticker = setInterval(schedule, AGE_TICK_MS)
  draw()

  return {
    note(text: string) {
      message = text
      schedule()
    },
    stop() {
      unsubscribe()
      clearInterval(ticker)
      clearTimeout(pending)
      draw()
      o.input.off('data', onData)
      o.input.pause()
      restore()
      process.removeListener('exit', restore)
    },
  }
}

// eslint-disable-next-line no-control-regex -- an escape sequence is what it matches
const SGR = /\x1b\[[0-9;]*m/y

/** The line cut to `width` visible characters; colour escapes count for nothing and are reset after a cut. */
export function cutToWidth(line: string, width: number): string {
  let visible = 0
  let out = ''
  for (let i = 0; i < line.length; ) {
    SGR.lastIndex = i
    const escape = SGR.exec(line)
    if (escape !== null) {
      out += escape[0]
      i += escape[0].length
      continue
    }
    if (visible === width) return `${out}\x1b[0m`
    out += line[i]
    visible++
    i++
  }
  return out
}
