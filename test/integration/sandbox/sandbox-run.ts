/**
 * `ironpool sandbox` as a real process, read through its plain lines: `<t>s <pool> Ready=<status>
 * <reason>`, `<t>s pid <name> <pid>`, `<t>s script: <step>`, and the kubeconfig line that names its
 * temporary folder.
 */
import {existsSync} from 'node:fs'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {CliProcess, ensureBuilt} from '../../support/cli.ts'
import {waitFor} from '../../support/wait.ts'

export interface StampedLine {
  index: number
  seconds: number
  text: string
}

const STAMPED = /^(\d+\.\d+)s (.*)$/

export class SandboxRun {
  readonly cli: CliProcess
  /** Wall time just before the process was spawned (dist/ already built). */
  readonly spawnedAt: number
  private readonly scriptDir: string

  private constructor(cli: CliProcess, spawnedAt: number, scriptDir: string) {
    this.cli = cli
    this.spawnedAt = spawnedAt
    this.scriptDir = scriptDir
  }

  static async start(args: readonly string[], script?: string): Promise<SandboxRun> {
    const scriptDir = await mkdtemp(path.join(tmpdir(), 'ironpool-sandbox-test-'))
    const scriptArgs: string[] = []
    if (script !== undefined) {
      const file = path.join(scriptDir, 'script.txt')
      await writeFile(file, script)
      scriptArgs.push(`--script=${file}`)
    }
    ensureBuilt()
    const spawnedAt = Date.now()
    return new SandboxRun(new CliProcess(['sandbox', ...args, ...scriptArgs]), spawnedAt, scriptDir)
  }

  lines(): StampedLine[] {
    return this.cli.stdout.flatMap((text, index) => {
      const match = STAMPED.exec(text)
      return match ? [{index, seconds: Number(match[1]), text: match[2] ?? ''}] : []
    })
  }

  /** The first stamped line after `after` (a line index) whose text matches; fails at once if the sandbox ends without it. */
  async waitForLine(pattern: RegExp, options: {after?: number; timeoutMs?: number} = {}): Promise<StampedLine> {
    const after = options.after ?? -1
    const found = await waitFor(`a sandbox line ${pattern} after line ${after}`, () => {
      const line = this.lines().find((l) => l.index > after && pattern.test(l.text))
      // Ended only once stdout has closed too: 'exit' may come before the last chunk.
      return line ?? (this.cli.child.stdout?.readableEnded ? 'ended' : undefined)
    }, {timeoutMs: options.timeoutMs ?? 60_000}).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))))
    if (found !== 'ended' && !(found instanceof Error)) return found
    const why = found === 'ended' ? `the sandbox ended without a line ${pattern}` : found.message
    throw new Error(`${why}\n--- stdout:\n${this.cli.stdout.join('\n')}\n--- stderr:\n${this.cli.stderr.join('\n')}`)
  }

  /** Every process group the sandbox reported starting (its `pid` lines). */
  processGroups(): {name: string; pid: number}[] {
    return this.lines().flatMap(({text}) => {
      const match = /^pid (\S+) (\d+)$/.exec(text)
      return match ? [{name: match[1] ?? '', pid: Number(match[2])}] : []
    })
  }

  /** The control plane's temporary folder, which holds everything the sandbox wrote. */
  tempDir(): string | undefined {
    const line = this.cli.stdout.find((text) => text.startsWith('export KUBECONFIG='))
    return line === undefined ? undefined : path.dirname(line.slice('export KUBECONFIG='.length))
  }

  /** Ends the process if a test left it running, and removes the script. */
  async dispose(): Promise<void> {
    if (this.cli.child.exitCode === null && this.cli.child.signalCode === null) {
      const timer = setTimeout(() => this.cli.child.kill('SIGKILL'), 20_000)
      await this.cli.stop('SIGTERM')
      clearTimeout(timer)
    }
    await rm(this.scriptDir, {recursive: true, force: true})
  }
}

/** True when no process of the group is left. */
export function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return false
  } catch {
    return true
  }
}

export function dirGone(dir: string | undefined): boolean {
  return dir !== undefined && !existsSync(dir)
}
