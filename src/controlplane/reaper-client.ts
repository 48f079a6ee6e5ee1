/**
 * The harness's side of the reaper (reaper.ts): a detached process that holds the list of process
 * groups and folders to clean up, and cleans them up when this process's end closes its stdin, even
 * after a SIGKILL that no exit handler sees.
 */
import {spawn} from 'node:child_process'
import path from 'node:path'
import type {Writable} from 'node:stream'
import {fileURLToPath} from 'node:url'

export class ReaperClient {
  private readonly stdin: Writable
  private closed = false

  constructor() {
    // reaper.ts beside this file, or reaper.js when running from dist/.
    const self = fileURLToPath(import.meta.url)
    const script = path.join(path.dirname(self), `reaper${path.extname(self)}`)
    const reaper = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', script], {detached: true, stdio: ['pipe', 'ignore', 'ignore']})
    // Neither the process nor its pipe may keep this process alive.
    reaper.unref()
    ;(reaper.stdin as Writable & {unref?: () => void}).unref?.()
    reaper.stdin.on('error', () => {})
    this.stdin = reaper.stdin
  }

  removeDir(dir: string): void {
    this.send(`dir ${dir}`)
  }

  killGroup(pgid: number): void {
    this.send(`pgid ${pgid}`)
  }

  /** The group has ended: a later group reusing its id must not be killed. */
  forgetGroup(pgid: number): void {
    this.send(`forget-pgid ${pgid}`)
  }

  /** After a clean stop: the reaper exits, with nothing left to do. */
  close(): void {
    this.closed = true
    this.stdin.end()
  }

  private send(line: string): void {
    if (!this.closed) this.stdin.write(`${line}\n`)
  }
}
