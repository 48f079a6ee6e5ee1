/**
 * The sandbox's table: `pool status`'s own columns and cells (src/cli/report/pool-status-rows.ts, rendered by
 * src/cli/table.ts), with a selection column in front and, behind, what the sandbox did to the pool's
 * poollet and runtime, so cause and effect sit on one line.
 */
import {STATUS_HEADERS, statusCells} from '../cli/report/pool-status-rows.ts'
import {renderTable, type CellInput} from '../cli/table.ts'
import type {PoolActor} from './pool-actor.ts'
import type {PoolBoard} from './pool-board.ts'

export const BOARD_HEADERS = ['#', ...STATUS_HEADERS, 'POOLLET', 'RUNTIME'] as const

export function boardLines(board: PoolBoard, actors: ReadonlyMap<string, PoolActor>, options: {selected: number; now: number; colour: boolean}): string[] {
  const rows = board.pools.map((pool, index): CellInput[] => {
    const actor = actors.get(pool.name)
    const mark = `${index === options.selected ? '>' : ' '}${index + 1}`
    const view = board.view(pool, options.now)
    const status = view === undefined ? [pool.name, pool.kind.name, '<not seen yet>'] : statusCells(view, {colour: options.colour})
    while (status.length < STATUS_HEADERS.length) status.push('')
    return [mark, ...status, actor?.poollet.state ?? '', actor?.runtimeMode ?? '']
  })
  return renderTable(BOARD_HEADERS, rows).lines
}
