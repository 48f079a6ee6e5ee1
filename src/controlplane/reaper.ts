/**
 * The control plane's reaper: a tiny process that outlives a crashed harness. The harness keeps its
 * stdin open and writes "pgid N" and "dir PATH" lines; when stdin closes (the harness stopped, or died
 * even by SIGKILL) the reaper kills every process group and removes every folder it was told about.
 * A harness that stops cleanly has already done both and sends nothing more.
 */
import {rmSync} from 'node:fs'

const groups = new Set<number>()
const dirs = new Set<string>()
let buffer = ''

process.stdin.setEncoding('utf8')
process.stdin.on('data', (chunk: string) => {
  buffer += chunk
  let newline
  while ((newline = buffer.indexOf('\n')) >= 0) {
    const line = buffer.slice(0, newline)
    buffer = buffer.slice(newline + 1)
    const [verb, ...rest] = line.split(' ')
    const arg = rest.join(' ')
    if (verb === 'pgid') groups.add(Number(arg))
    else if (verb === 'dir') dirs.add(arg)
    else if (verb === 'forget-pgid') groups.delete(Number(arg))
  }
})
process.stdin.on('end', () => {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL')
    } catch {
      // Already gone.
    }
  }
  for (const dir of dirs) rmSync(dir, {recursive: true, force: true})
  process.exit(0)
})
// The harness's own signals must not take the reaper down before it has cleaned up.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {})
