/**
 * Runs `ironpool` as a real process, the way an operator or a Deployment does: bin/run.js (with its shebang's Node flags) from
 * the bundle in dist/ (built once per test run when src/ is newer), output captured line by line.
 */
import {execFileSync, spawn, type ChildProcess} from 'node:child_process'
import {existsSync, readdirSync, statSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {ironpoolCommand} from '../../src/cli/ironpool-process.ts'
import {waitFor} from './wait.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

function newestMtime(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, {withFileTypes: true, recursive: true})) {
    if (entry.isFile()) newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs)
  }
  return newest
}

let built = false
/** Builds dist/ (`npm run build`: scripts/build.ts) unless it is already newer than every source file. */
export function ensureBuilt(): void {
  if (built) return
  const dist = path.join(ROOT, 'dist')
  const sources = Math.max(newestMtime(path.join(ROOT, 'src')), newestMtime(path.join(ROOT, 'scripts')))
  if (!existsSync(dist) || sources > newestMtime(dist)) {
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build.ts')], {stdio: 'inherit'})
  }
  built = true
}

export class CliProcess {
  readonly child: ChildProcess
  readonly stdout: string[] = []
  readonly stderr: string[] = []
  readonly exited: Promise<{code: number | null; signal: NodeJS.Signals | null}>

  /** nodeFlags: in place of bin/run.js's own (benches comparing heap settings). */
  constructor(args: readonly string[], env: NodeJS.ProcessEnv = {}, nodeFlags?: readonly string[]) {
    ensureBuilt()
    const command = ironpoolCommand(args, nodeFlags)
    this.child = spawn(command.command, command.args, {
      cwd: ROOT,
      env: {...process.env, NO_COLOR: '1', ...env},
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const collect = (stream: NodeJS.ReadableStream | null, into: string[]) => {
      let partial = ''
      stream?.setEncoding('utf8')
      stream?.on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n')
        partial = lines.pop() ?? ''
        into.push(...lines)
      })
      stream?.on('end', () => partial && into.push(partial))
    }
    collect(this.child.stdout, this.stdout)
    collect(this.child.stderr, this.stderr)
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({code, signal})))
  }

  /** Structured log lines (pino JSON on stderr). */
  logs(): Record<string, unknown>[] {
    return this.stderr.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>]
      } catch {
        return []
      }
    })
  }

  /** Waits for a log line whose msg includes the text (and whose fields match), returning it. */
  waitForLog(text: string, fields: Record<string, unknown> = {}, timeoutMs = 30_000): Promise<Record<string, unknown>> {
    return waitFor(
      `a log line "${text}"`,
      () => this.logs().find((l) => String(l.msg).includes(text) && Object.entries(fields).every(([k, v]) => l[k] === v)),
      {timeoutMs},
    )
  }

  /** The address of its /metrics, once it logged it (a controller, or a poollet with --metrics-bind-address). */
  async metricsUrl(): Promise<string> {
    const line = await this.waitForLog('serving metrics')
    return `http://${String(line.address)}/metrics`
  }

  /** Sends a signal (and SIGCONT, should a test have frozen it) and resolves with how the process ended. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<{code: number | null; signal: NodeJS.Signals | null}> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill(signal)
      this.child.kill('SIGCONT')
    }
    return this.exited
  }
}

/** Runs the CLI to completion. */
export async function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<{code: number | null; stdout: string; stderr: string}> {
  const cli = new CliProcess(args, env)
  const {code} = await cli.exited
  // Let the streams drain their last chunk.
  await new Promise((resolve) => setImmediate(resolve))
  return {code, stdout: cli.stdout.join('\n'), stderr: cli.stderr.join('\n')}
}
