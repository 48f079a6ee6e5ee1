/**
 * A long-running child process of the control plane (etcd, kube-apiserver) in its own process group,
 * with its output in a log file, that can be stopped and started again with the same arguments.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {openSync, closeSync, readFileSync} from 'node:fs'
import net from 'node:net'

/** How long a stop waits after SIGTERM before SIGKILL: kube-apiserver drains its requests first. */
const STOP_GRACE_MS = 5_000

export class ManagedProcess {
  private child: ChildProcess | undefined
  private exited: Promise<void> = Promise.resolve()
  readonly name: string
  readonly command: string
  readonly args: readonly string[]
  readonly logFile: string
  private readonly onStart: (pid: number) => void

  constructor(options: {name: string; command: string; args: readonly string[]; logFile: string; onStart?: (pid: number) => void}) {
    this.name = options.name
    this.command = options.command
    this.args = options.args
    this.logFile = options.logFile
    this.onStart = options.onStart ?? (() => {})
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
  }

  get pid(): number | undefined {
    return this.child?.pid
  }

  start(): void {
    if (this.running) throw new Error(`${this.name} is already running`)
    const log = openSync(this.logFile, 'a')
    // detached: its own process group, so a terminal's Ctrl-C reaches the harness (which cleans up)
    // rather than racing it, and the whole group can be killed at once.
    const child = spawn(this.command, this.args, {detached: true, stdio: ['ignore', log, log]})
    closeSync(log)
    this.child = child
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()))
    child.once('error', () => {})
    if (child.pid !== undefined) this.onStart(child.pid)
    child.unref()
  }

  /** Freezes the whole group (SIGSTOP): it holds its sockets open but answers nothing until resume(). */
  pause(): void {
    if (this.child === undefined || !this.running) return
    killGroup(this.child, 'SIGSTOP')
    // kill() returns once the signal is sent; the process stops when its threads next take it, which
    // on a busy machine can come after a request the caller sends next. Returns once the kernel says
    // stopped, so that "paused" means answering nothing from here on.
    waitUntilStopped(this.child, STOP_TIMEOUT_MS)
  }

  /** Lets a paused group run again (SIGCONT). */
  resume(): void {
    if (this.child !== undefined && this.running) killGroup(this.child, 'SIGCONT')
  }

  /**
   * SIGTERM, then SIGKILL after a grace period (or at once with signal 'SIGKILL'); resolves when it has
   * exited. A paused group gets SIGCONT right after the signal, else SIGTERM would wait for a resume.
   */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child
    if (child === undefined || !this.running) return
    killGroup(child, signal)
    killGroup(child, 'SIGCONT')
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), signal === 'SIGKILL' ? 0 : STOP_GRACE_MS)
    await this.exited
    clearTimeout(timer)
  }

  /** The last lines of the log, for error messages. */
  tail(lines = 20): string {
    try {
      return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
    } catch {
      return ''
    }
  }
}

const STOP_TIMEOUT_MS = 2_000

/** The process's state letter from /proc (T when stopped by a signal), or undefined when it is gone. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  } catch {
    return undefined
  }
}

/** Waits, synchronously and at most timeoutMs, until the child is stopped (or gone). */
function waitUntilStopped(child: ChildProcess, timeoutMs: number): void {
  if (child.pid === undefined) return
  const until = performance.now() + timeoutMs
  const tick = new Int32Array(new SharedArrayBuffer(4))
  for (;;) {
    const state = processState(child.pid)
    if (state === undefined || state === 'T' || state === 't' || performance.now() > until) return
    Atomics.wait(tick, 0, 0, 1) // 1 ms between looks, without spinning
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal)
  } catch {
    // Already gone.
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}
