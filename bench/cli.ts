/**
 * The operator's CLI as a process (issue 12): `ironpool pool status` against 6 pools beside
 * `kubectl get machinepools,volumepools,bucketpools` on the same control plane in the same run, and the
 * process a flag test in `npm test` starts (a usage error, exit 2), with `ironpool version` and bare
 * `node` for scale. Each command runs --runs times after one warm-up run (a warm machine: files in the
 * page cache, kubectl's discovery cache filled); wall time from spawn to exit, CPU (user+sys) and peak
 * RSS from /usr/bin/time.
 */
import {spawn} from 'node:child_process'
import {mkdtemp, readFile, rm} from 'node:fs/promises'
import {availableParallelism, loadavg, tmpdir} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {KubeConfig} from '@kubernetes/client-node'
import type {ControlPlane} from '../src/controlplane/control-plane.ts'
import {POOL_KIND_NAMES, POOL_KINDS} from '../src/core/pool-kinds.ts'
import {ironpoolCommand} from '../src/cli/ironpool-process.ts'
import {ensureBuilt} from '../test/support/cli.ts'
import {nodeFlagsArg, nodeFlagsSpec, parseArgs, positiveInt} from './support/args.ts'
import {progress, startBenchPlane} from './support/plane.ts'
import {seedPools} from './support/seed.ts'
import {percentile} from './support/stats.ts'
import {fmt, printTable} from './support/table.ts'

const flags = parseArgs({
  runs: {default: '7', help: 'measured runs per command (after one warm-up run)'},
  pools: {default: '6', help: 'pools, spread round-robin over the three kinds'},
  'node-flags': nodeFlagsSpec("ironpool's"),
})
const nodeFlags = nodeFlagsArg(flags['node-flags'])
const runs = positiveInt('runs', flags.runs)
const poolCount = positiveInt('pools', flags.pools)
const ROOT = fileURLToPath(new URL('../', import.meta.url))

interface Sample {
  wallMs: number
  cpuMs: number
  maxRssKiB: number
  code: number | null
}

/** One run of argv under /usr/bin/time: wall time measured here, CPU and peak RSS by time(1). */
async function measure(dir: string, argv: readonly string[], env: NodeJS.ProcessEnv): Promise<Sample> {
  const out = path.join(dir, 'time.txt')
  const started = performance.now()
  const child = spawn('/usr/bin/time', ['-o', out, '-f', '%U %S %M', ...argv], {cwd: ROOT, env: {...process.env, NO_COLOR: '1', ...env}, stdio: ['ignore', 'ignore', 'pipe']})
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)))
  const wallMs = performance.now() - started
  // time(1) writes "Command exited with non-zero status N" before the figures when the command fails.
  const last = (await readFile(out, 'utf8')).trim().split('\n').at(-1) ?? ''
  const [user, sys, rss] = last.split(' ').map(Number)
  if (code === null || Number.isNaN(user)) throw new Error(`${argv.join(' ')}: ${stderr}`)
  const exit = /non-zero status (\d+)/.exec(await readFile(out, 'utf8'))
  return {wallMs, cpuMs: ((user ?? 0) + (sys ?? 0)) * 1000, maxRssKiB: rss ?? 0, code: exit ? Number(exit[1]) : 0}
}

const dir = await mkdtemp(path.join(tmpdir(), 'ironpool-bench-cli-'))
let plane: ControlPlane | undefined
try {
  ensureBuilt()
  progress('control plane')
  plane = await startBenchPlane()
  const admin = new KubeConfig()
  admin.loadFromFile(plane.adminKubeconfig)
  for (const [i, name] of POOL_KIND_NAMES.entries()) {
    const names = Array.from({length: poolCount}, (_, j) => j).filter((j) => j % POOL_KIND_NAMES.length === i).map((j) => `${name}-${j + 1}`)
    await seedPools(admin, POOL_KINDS[name], names)
  }
  const kubeconfig = plane.adminKubeconfig
  const kubectl = plane.binaries.kubectl
  const plurals = POOL_KIND_NAMES.map((n) => POOL_KINDS[n].plural).join(',')
  const node = process.execPath
  const ironpool = (...args: string[]) => {
    const command = ironpoolCommand(args, nodeFlags)
    return [command.command, ...command.args]
  }
  const commands: {name: string; argv: string[]; env?: NodeJS.ProcessEnv; exit: number}[] = [
    {name: `ironpool pool status (${poolCount} pools)`, argv: ironpool('pool', 'status', `--kubeconfig=${kubeconfig}`), exit: 0},
    {name: `kubectl get ${plurals}`, argv: [kubectl, `--kubeconfig=${kubeconfig}`, 'get', plurals], exit: 0},
    {name: 'ironpool lease inspect machine-1', argv: ironpool('lease', 'inspect', 'machine-1', `--kubeconfig=${kubeconfig}`), exit: 0},
    {name: 'ironpool poollet --heartbeat-interval=0s (exit 2)', argv: ironpool('poollet', '--pool-name=p1', '--heartbeat-interval=0s'), exit: 2},
    {name: 'ironpool controller --grace-period=0s (exit 2)', argv: ironpool('controller', '--grace-period=0s'), exit: 2},
    {name: 'ironpool version', argv: ironpool('version'), exit: 0},
    {name: 'ironpool --help', argv: ironpool('--help'), exit: 0},
    {name: 'node -e 0 (bare Node, for scale)', argv: [node, '-e', '0'], exit: 0},
  ]
  const rows = [['command', 'runs', 'wall ms min', 'p50', 'max', 'CPU ms p50', 'peak RSS MiB p50']]
  const load0 = loadavg()[0]!
  for (const command of commands) {
    progress(command.name)
    await measure(dir, command.argv, command.env ?? {})
    const samples: Sample[] = []
    for (let i = 0; i < runs; i++) {
      const sample = await measure(dir, command.argv, command.env ?? {})
      if (sample.code !== command.exit) throw new Error(`${command.name}: exit ${sample.code}, wanted ${command.exit}`)
      samples.push(sample)
    }
    const wall = samples.map((s) => s.wallMs).sort((a, b) => a - b)
    const p50 = (values: number[]) => percentile(values, 50)
    rows.push([
      command.name,
      fmt(runs),
      fmt(wall[0]!),
      fmt(p50(wall)),
      fmt(wall.at(-1)!),
      fmt(p50(samples.map((s) => s.cpuMs))),
      fmt(p50(samples.map((s) => s.maxRssKiB / 1024)), 1),
    ])
  }
  process.stdout.write(`\nRun: ${poolCount} pools, ${runs} runs per command after 1 warm-up; load average ${fmt(load0, 2)} → ${fmt(loadavg()[0]!, 2)} on ${availableParallelism()} cores\n`)
  printTable('CLI processes, spawn to exit', rows)
} finally {
  progress('stopping everything')
  await plane?.stop()
  await rm(dir, {recursive: true, force: true})
}
