/**
 * Keys of the live view, decoded from raw-mode terminal input. In raw mode the terminal sends Ctrl-C
 * as a byte instead of raising SIGINT, so it is decoded here as quit.
 */
export type ToggleKey = 's' | 'f' | 'x' | 'h'

export type KeyCommand =
  | {type: 'select'; index: number}
  | {type: 'move'; delta: number}
  | {type: 'toggle'; key: ToggleKey}
  | {type: 'quit'}

export const KEY_HELP = 'keys: 1-9 ↑↓ select · s stop/start poollet · f freeze/thaw (SIGSTOP) · x fail/recover runtime · h hang/recover runtime · q quit'

const SEQUENCES: Readonly<Record<string, KeyCommand>> = {
  '\x1b[A': {type: 'move', delta: -1},
  '\x1b[B': {type: 'move', delta: 1},
  '\x1bOA': {type: 'move', delta: -1},
  '\x1bOB': {type: 'move', delta: 1},
}

const SINGLE: Readonly<Record<string, KeyCommand>> = {
  k: {type: 'move', delta: -1},
  j: {type: 'move', delta: 1},
  s: {type: 'toggle', key: 's'},
  f: {type: 'toggle', key: 'f'},
  x: {type: 'toggle', key: 'x'},
  h: {type: 'toggle', key: 'h'},
  q: {type: 'quit'},
  '\x03': {type: 'quit'},
  '\x04': {type: 'quit'},
}

/** Every command in one chunk of input (a paste or fast typing may bring several); unknown bytes are skipped. */
export function decodeKeys(chunk: string): KeyCommand[] {
  const commands: KeyCommand[] = []
  for (let i = 0; i < chunk.length; ) {
    const sequence = SEQUENCES[chunk.slice(i, i + 3)]
    if (sequence !== undefined) {
      commands.push(sequence)
      i += 3
      continue
    }
    const char = chunk[i] ?? ''
    const single = SINGLE[char.toLowerCase()]
    if (single !== undefined) commands.push(single)
    else if (char >= '1' && char <= '9') commands.push({type: 'select', index: Number(char) - 1})
    i++
  }
  return commands
}
