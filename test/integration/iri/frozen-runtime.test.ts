/**
 * The probe against a frozen runtime: a real child process serving IRI on a unix socket, SIGSTOPped.
 * Its kernel still accepts connections (until the listen backlog is full), nobody answers. Each probe
 * that gets no answer must free its socket and session: 1,000 probes leave this process's open file
 * descriptors and resident memory flat. Deadlines are short (15 ms) so the test stays quick.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'
import {setFlagsFromString} from 'node:v8'
import {runInNewContext} from 'node:vm'
import {expect} from 'chai'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {createRuntimeProbe, type RuntimeClient} from '../../../src/iri/index.ts'
import {socketDir, within} from './support.ts'

const PROBES = 1000
const DEADLINE_MS = 15
const MiB = 2 ** 20
const TEST_RUNTIME = pathToFileURL(join(import.meta.dirname, '../../../src/iri/test-runtime.ts')).href
const KINDS = pathToFileURL(join(import.meta.dirname, '../../../src/core/pool-kinds.ts')).href

// A full collection before each reading, so that garbage not yet collected does not read as a leak.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

function openFds(): number {
  return readdirSync('/proc/self/fd').length
}

/** Resolves once every socket retired by the probes has been released (destroy closes on the next turns of the loop). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
  gc()
}

describe('IRI runtime probe against a frozen runtime (a child process, SIGSTOPped)', function () {
  this.timeout(120_000)
  let dir: Awaited<ReturnType<typeof socketDir>>
  let child: ChildProcess | undefined
  let probe: RuntimeClient | undefined

  beforeEach(async () => {
    dir = await socketDir()
    const socketPath = join(dir.dir, 'runtime.sock')
    const script = `
      import {startTestRuntime} from ${JSON.stringify(TEST_RUNTIME)}
      import {POOL_KINDS} from ${JSON.stringify(KINDS)}
      await startTestRuntime({kind: POOL_KINDS.machine, socketPath: ${JSON.stringify(socketPath)}})
      process.stdout.write('listening\\n')
    `
    child = spawn(process.execPath, ['--input-type=module', '-e', script], {stdio: ['ignore', 'pipe', 'inherit']})
    const listening = new Promise<void>((resolve, reject) => {
      child!.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolve())
      child!.once('exit', (code) => reject(new Error(`the runtime exited (${code}) before listening`)))
    })
    await within(30_000, 'the runtime child listening', listening)
    probe = createRuntimeProbe(POOL_KINDS.machine, `unix://${socketPath}`, {timeoutMs: DEADLINE_MS * 100})
  })

  afterEach(async () => {
    probe?.close()
    if (child !== undefined && child.exitCode === null) {
      child.kill('SIGCONT')
      const exited = new Promise((resolve) => child!.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
    }
    await dir.remove()
  })

  it(`${PROBES} probes that get no answer leave open fds and RSS flat, and the thawed runtime answers the next`, async () => {
    await probe!.probe(new AbortController().signal) // a live answer first: the session is up
    probe!.close()
    const frozen = createRuntimeProbe(POOL_KINDS.machine, `unix://${join(dir.dir, 'runtime.sock')}`, {timeoutMs: DEADLINE_MS})
    probe = frozen
    child!.kill('SIGSTOP')
    const signal = new AbortController().signal
    const failures = new Map<string, number>()
    const run = async (count: number) => {
      for (let i = 0; i < count; i++) {
        await frozen.probe(signal).then(
          () => failures.set('answered', (failures.get('answered') ?? 0) + 1),
          (error: Error) => {
            const kind = /no answer within/.test(error.message) ? 'deadline' : error.message.replace(/.*: /, '')
            failures.set(kind, (failures.get(kind) ?? 0) + 1)
          },
        )
      }
      await settle()
    }
    await run(20) // warm-up: the modules and buffers a failed probe touches
    const before = {fds: openFds(), rss: process.memoryUsage.rss(), heap: process.memoryUsage().heapUsed}
    const samples: number[] = []
    const rssSamples: string[] = []
    for (let i = 0; i < 10; i++) {
      await run(PROBES / 10)
      samples.push(openFds())
      rssSamples.push((process.memoryUsage.rss() / MiB).toFixed(1))
    }
    const after = {fds: openFds(), rss: process.memoryUsage.rss(), heap: process.memoryUsage().heapUsed}
    const figures = `fds ${before.fds} -> ${after.fds} (after each 100: ${samples.join(' ')}), RSS ${(before.rss / MiB).toFixed(1)} -> ${(after.rss / MiB).toFixed(1)} MiB (after each 100: ${rssSamples.join(' ')}), heap used ${(before.heap / MiB).toFixed(1)} -> ${(after.heap / MiB).toFixed(1)} MiB; outcomes ${JSON.stringify(Object.fromEntries(failures))}`
    process.stderr.write(`      ${figures}\n`)
    expect(failures.get('answered') ?? 0, figures).to.equal(0)
    expect(failures.get('deadline') ?? 0, figures).to.be.greaterThan(100) // until the frozen runtime's listen backlog is full
    expect(Math.max(...samples) - before.fds, figures).to.be.at.most(3)
    expect(after.rss - before.rss, figures).to.be.below(16 * MiB)

    child!.kill('SIGCONT')
    const thawed = createRuntimeProbe(POOL_KINDS.machine, `unix://${join(dir.dir, 'runtime.sock')}`, {timeoutMs: 5000})
    try {
      // Thawed, it first accepts (and drops) the backlog of abandoned connections: until then a dial may still find the backlog full.
      const deadline = performance.now() + 30_000
      for (;;) {
        const error = await thawed.probe(signal).then(() => undefined, (e: Error) => e)
        if (error === undefined) break
        if (!/EAGAIN/.test(error.message) || performance.now() > deadline) throw error
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    } finally {
      thawed.close()
    }
  })
})
