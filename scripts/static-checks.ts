/**
 * `npm test`'s steps before mocha, side by side: the type check, the lint and the bundle. One after
 * the other they took 52 s of a fresh clone's run (lint 38, typecheck 10.5, build 3, on this
 * project's 2-core machine); each is one busy process, so two cores run them in about the time of the
 * longest. Each step's output is printed whole when it ends (never interleaved), and the script fails
 * when any step fails, naming them all.
 */
import {spawn} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name)

/** The npm scripts these stand for (package.json: typecheck, lint, build), run as those would run them. */
const STEPS: {name: string; command: string; args: string[]}[] = [
  {name: 'lint', command: bin('eslint'), args: ['.']},
  {name: 'typecheck', command: bin('tsc'), args: ['-p', 'tsconfig.json']},
  {name: 'build', command: process.execPath, args: [path.join(ROOT, 'scripts', 'build.ts')]},
]

function run(step: (typeof STEPS)[number]): Promise<{name: string; ok: boolean; output: string; ms: number}> {
  const started = performance.now()
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    const child = spawn(step.command, step.args, {cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe']})
    child.stdout.on('data', (c: Buffer) => chunks.push(c))
    child.stderr.on('data', (c: Buffer) => chunks.push(c))
    const done = (ok: boolean, extra = '') => resolve({name: step.name, ok, output: Buffer.concat(chunks).toString() + extra, ms: performance.now() - started})
    child.on('error', (error) => done(false, `\n${step.name}: could not start ${step.command}: ${error.message}\n`))
    child.on('close', (code, signal) => done(code === 0, code === 0 ? '' : `\n${step.name} exited with ${signal ?? `code ${String(code)}`}\n`))
  })
}

const results = await Promise.all(
  STEPS.map(async (step) => {
    const result = await run(step)
    process.stdout.write(`\n> ${step.name}: ${[step.command === process.execPath ? 'node' : path.basename(step.command), ...step.args.map((a) => path.relative(ROOT, a) || a)].join(' ')} (${result.ok ? 'ok' : 'FAILED'}, ${(result.ms / 1000).toFixed(1)} s)\n${result.output}`)
    return result
  }),
)
const failed = results.filter((r) => !r.ok).map((r) => r.name)
if (failed.length > 0) {
  process.stderr.write(`\nstatic checks failed: ${failed.join(', ')}\n`)
  process.exit(1)
}
