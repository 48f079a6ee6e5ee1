/**
 * A sandbox session from start to teardown, in one of three faces: the live table with keys (a person
 * at a terminal), a script, or plain state lines until a signal (a pipe). Whatever ends the session —
 * q, Ctrl-C, SIGTERM, the script's end, a failed wait — the same teardown follows, and its last line
 * says what is left (nothing, or exactly what).
 */
import {existsSync} from 'node:fs'
import {formatDuration, errorMessage} from '../core/index.ts'
import {setupSignalHandler} from '../runtime/signals.ts'
import {operatorHints} from './hints.ts'
import type {SandboxOptions} from './options.ts'
import {onceAllReady, printReadyChanges} from './ready-lines.ts'
import {startSandbox, type Sandbox} from './sandbox.ts'
import type {ScriptStep} from './script.ts'
import {runScript, ScriptTimeoutError} from './script-runner.ts'
import {startTtyView} from './tty-view.ts'

export interface SandboxIo {
  out: NodeJS.WriteStream
  input: NodeJS.ReadStream
  colour: boolean
}

/** Seconds since this process began (performance's time origin), the stamp of every plain line. */
const stamp = () => `${(performance.now() / 1000).toFixed(2)}s`

/** Runs a session; resolves with the exit code. */
export async function runSandbox(options: SandboxOptions, script: readonly ScriptStep[] | undefined, io: SandboxIo): Promise<number> {
  const say = (line: string) => io.out.write(`${stamp()} ${line}\n`)
  const signals = setupSignalHandler()
  const quit = new AbortController()
  const signal = AbortSignal.any([signals.signal, quit.signal])
  let sandbox: Sandbox
  try {
    sandbox = await startSandbox(options, say, signals.signal)
  } catch (error) {
    signals.dispose()
    if (signals.signal.aborted) return 0
    say(`sandbox failed to start: ${errorMessage(error)}`)
    return 1
  }

  const {plane, board, actors} = sandbox
  // Every group this session started, restarted poollets included: teardown must have ended them all.
  const groups = new Map<number, string>()
  const remember = () => sandbox.processGroups().forEach(({name, pid}) => groups.set(pid, name))
  remember()
  const header = [
    `kubeconfig: ${plane.adminKubeconfig}`,
    `export KUBECONFIG=${plane.adminKubeconfig}`,
    ...operatorHints({pathEnv: process.env.PATH, cwd: process.cwd(), pool: board.pools[0]?.name}),
    `logs: ${sandbox.workDir}/*.log`,
  ]
  const allReady = `all ${board.pools.length} pools Ready=True`
  const cleanups: (() => void)[] = []
  let code = 0
  try {
    if (script === undefined && io.out.isTTY && io.input.isTTY) {
      const settings = `grace period ${formatDuration(options.gracePeriodMs)}, heartbeat ${formatDuration(options.heartbeatIntervalMs)}`
      const status = () => [...header, `controller: ${sandbox.controller.state} (${settings})`]
      const view = startTtyView({board, actors, out: io.out, input: io.input, header: status, colour: io.colour, onQuit: () => quit.abort()})
      cleanups.push(() => view.stop(), onceAllReady(board, () => view.note(`${allReady}, ${stamp()} after start`)))
      await aborted(signal)
    } else {
      header.forEach((line) => io.out.write(`${line}\n`))
      for (const [pid, name] of groups) say(`pid ${name} ${pid}`)
      cleanups.push(printReadyChanges(board, say), onceAllReady(board, () => say(`${allReady} (${stamp()} after start)`)))
      if (script === undefined) await aborted(signal)
      else await runScript(script, {board, actors, say, signal})
    }
  } catch (error) {
    if (!signal.aborted) {
      say(error instanceof ScriptTimeoutError ? error.message : `sandbox failed: ${errorMessage(error)}`)
      code = 1
    }
  } finally {
    cleanups.reverse().forEach((cleanup) => cleanup())
    remember()
    say('stopping: poollets and controller, runtimes, control plane')
    await sandbox.stop()
    signals.dispose()
  }
  const left = [...groups].filter(([pid]) => groupAlive(pid))
  const dirLeft = existsSync(plane.dir)
  say(
    `stopped: ${groups.size - left.length} of ${groups.size} process groups ended` +
      (left.length > 0 ? ` (still running: ${left.map(([pid, name]) => `${name} ${pid}`).join(', ')})` : '') +
      `; ${plane.dir} ${dirLeft ? 'is still there' : 'removed'}`,
  )
  return left.length > 0 || dirLeft ? 1 : code
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), {once: true})))
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}
