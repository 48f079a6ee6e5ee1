/**
 * promtool for the tests: found in $PROMTOOL or the cache, else built once from Go modules
 * (src/controlplane/promtool.ts), printing progress, the way `npm run controlplane` builds the control
 * plane; and a runner that keeps the exit code and both outputs.
 */
import {spawn} from 'node:child_process'
import {ensurePromtool} from '../../src/controlplane/promtool.ts'

/** A first build took 9 minutes on two busy cores, 30 on two very busy ones: a before() hook waiting for it needs this long. */
export const PROMTOOL_BUILD_TIMEOUT_MS = 60 * 60_000

let binary: Promise<string> | undefined

export function promtool(): Promise<string> {
  binary ??= ensurePromtool({progress: (line) => process.stderr.write(`${line}\n`)})
  return binary
}

export interface PromtoolResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs promtool to its end (bounded: no check here takes a minute), input on stdin. */
export async function runPromtool(args: readonly string[], options: {cwd?: string; input?: string} = {}): Promise<PromtoolResult> {
  const path = await promtool()
  return new Promise((resolve, reject) => {
    const child = spawn(path, args, {cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'], timeout: 120_000})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({code, stdout, stderr}))
    child.stdin.end(options.input ?? '')
  })
}
