/**
 * Finds or builds the control plane's binaries: kube-apiserver, kubectl, etcd and kube-controller-manager
 * (only its CSR signer runs, and only in the tests that need certificates issued).
 *
 * Order: KUBEBUILDER_ASSETS (envtest's convention: a folder holding the first three, used as is; envtest
 * ships no kube-controller-manager, so there it is optional and only its users fail); else the
 * cache, keyed by the pinned versions; else a build with Go from controlplane/go.mod, whose
 * `require k8s.io/kubernetes` line is the one place the Kubernetes version is pinned.
 *
 * Only what is asked for is built: the sandbox and most tests need the first three (CORE_BINARIES);
 * kube-controller-manager (two minutes of a cold build on 2 cores) is built when the first user of the
 * CSR signer starts it. Each binary is cached by itself, in the one folder named by the recipe, so a
 * folder that already holds some binaries (an earlier build of all four, or of three) is used as is
 * and only the missing ones are added to it.
 */
import {spawn} from 'node:child_process'
import {createHash} from 'node:crypto'
import {existsSync} from 'node:fs'
import {mkdir, mkdtemp, readFile, rename, rm, writeFile} from 'node:fs/promises'
import {homedir} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

export const BINARY_NAMES = ['kube-apiserver', 'kubectl', 'etcd', 'kube-controller-manager'] as const
export type BinaryName = (typeof BINARY_NAMES)[number]
/** What KUBEBUILDER_ASSETS must hold (envtest's three), and what the sandbox and a ControlPlane run. */
export const CORE_BINARIES: readonly BinaryName[] = ['kube-apiserver', 'kubectl', 'etcd']
export type Binaries = Readonly<Record<BinaryName, string>>

/** The folder of the Go module that pins and builds the control plane. */
export const CONTROLPLANE_MODULE_DIR = fileURLToPath(new URL('../../controlplane/', import.meta.url))

/** Go packages built, by binary name. */
const PACKAGES: Record<BinaryName, string> = {
  'kube-apiserver': 'k8s.io/kubernetes/cmd/kube-apiserver',
  kubectl: 'k8s.io/kubernetes/cmd/kubectl',
  etcd: 'go.etcd.io/etcd/server/v3',
  'kube-controller-manager': 'k8s.io/kubernetes/cmd/kube-controller-manager',
}

export interface PinnedVersions {
  kubernetes: string
  etcd: string
}

export async function pinnedVersions(moduleDir = CONTROLPLANE_MODULE_DIR): Promise<PinnedVersions> {
  const goMod = await readFile(path.join(moduleDir, 'go.mod'), 'utf8')
  const version = (module: string) => {
    const match = new RegExp(`^\\s*(?:require\\s+)?${module.replaceAll('.', '\\.')}\\s+(v\\S+)`, 'm').exec(goMod)
    if (!match?.[1]) throw new Error(`${moduleDir}go.mod does not pin ${module}`)
    return match[1]
  }
  return {kubernetes: version('k8s.io/kubernetes'), etcd: version('go.etcd.io/etcd/server/v3')}
}

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'ironpool', 'controlplane')
}

function binariesIn(dir: string): Binaries {
  return Object.fromEntries(BINARY_NAMES.map((name) => [name, path.join(dir, name)])) as Record<BinaryName, string>
}

function missingIn(binaries: Binaries, names: readonly BinaryName[]): BinaryName[] {
  return names.filter((name) => !existsSync(binaries[name]))
}

export interface EnsureOptions {
  env?: NodeJS.ProcessEnv
  /** Progress lines (a build takes minutes the first time). */
  progress?: (line: string) => void
  /** The binaries that must exist when this returns; default CORE_BINARIES. The others' paths are where they would be. */
  names?: readonly BinaryName[]
}

/** The binaries to run, building those asked for once if neither KUBEBUILDER_ASSETS nor the cache has them. */
export async function ensureBinaries(options: EnsureOptions = {}): Promise<Binaries & {source: string}> {
  const env = options.env ?? process.env
  const names = options.names ?? CORE_BINARIES
  const progress = options.progress ?? (() => {})
  const assets = env.KUBEBUILDER_ASSETS
  if (assets) {
    const binaries = binariesIn(assets)
    const missing = missingIn(binaries, CORE_BINARIES)
    if (missing.length > 0) {
      throw new Error(`KUBEBUILDER_ASSETS=${assets} lacks ${missing.join(', ')}: it must hold kube-apiserver, kubectl and etcd`)
    }
    return {...binaries, source: `KUBEBUILDER_ASSETS (${assets})`}
  }
  const versions = await pinnedVersions()
  const dir = path.join(cacheRoot(env), await cacheKey(versions))
  const cached = binariesIn(dir)
  const missing = missingIn(cached, names)
  if (missing.length === 0) return {...cached, source: `cache (${dir})`}

  const go = await goVersion(env)
  if (go === undefined) {
    throw new Error(
      'The control plane binaries are not built and Go was not found. Install Go 1.26 or newer (it builds ' +
        `Kubernetes ${versions.kubernetes} and etcd ${versions.etcd} into ${dir}), or set KUBEBUILDER_ASSETS to a ` +
        'folder holding kube-apiserver, kubectl and etcd.',
    )
  }
  await build(dir, missing, versions, go, env, progress)
  return {...cached, source: `built (${dir})`}
}

/**
 * Go flags for each binary. Kubernetes stamps its version at link time (hack/lib/version.sh); without
 * it /version says v0.0.0-master and clients cannot tell which release they talk to.
 */
function buildArgs(name: BinaryName, versions: PinnedVersions): string[] {
  const [major, minor] = versions.kubernetes.replace(/^v/, '').split('.')
  const stamps =
    name === 'etcd'
      ? []
      : Object.entries({gitVersion: versions.kubernetes, gitMajor: major, gitMinor: minor, gitTreeState: 'clean'}).flatMap(([key, value]) => [
          `-X k8s.io/client-go/pkg/version.${key}=${value}`,
          `-X k8s.io/component-base/version.${key}=${value}`,
        ])
  return ['build', '-trimpath', `-ldflags=-s -w ${stamps.join(' ')}`.trim(), PACKAGES[name]]
}

/** Versions plus a hash of go.mod, go.sum and the build flags: any change to the recipe rebuilds. */
async function cacheKey(versions: PinnedVersions): Promise<string> {
  const hash = createHash('sha256')
  for (const file of ['go.mod', 'go.sum']) hash.update(await readFile(path.join(CONTROLPLANE_MODULE_DIR, file)))
  // Every binary's flags, whichever are built: the folder's name stays the same as binaries are added.
  for (const name of BINARY_NAMES) hash.update(buildArgs(name, versions).join(' '))
  return `${versions.kubernetes}-etcd-${versions.etcd}-${hash.digest('hex').slice(0, 10)}`
}

async function goVersion(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  try {
    return (await run('go', ['env', 'GOVERSION'], {env})).trim()
  } catch {
    return undefined
  }
}

/**
 * Builds the missing binaries into dir, one at a time. Each is linked into a staging folder beside dir
 * and renamed into place, so an interrupted or concurrent build never leaves a half-written binary in
 * the cache (two builds of the same binary: the last rename wins, and both results are the same).
 * Progress: which binary of how many, and, every 15 s, how many of its packages Go has compiled so far
 * out of the most it can have to (`go list -deps`; those already in Go's build cache are not compiled).
 */
async function build(dir: string, names: readonly BinaryName[], versions: PinnedVersions, go: string, env: NodeJS.ProcessEnv, progress: (line: string) => void) {
  await mkdir(dir, {recursive: true})
  const staging = await mkdtemp(`${dir}.building-`)
  const started = Date.now()
  try {
    progress(`Building the control plane with ${go}: Kubernetes ${versions.kubernetes}, etcd ${versions.etcd}`)
    progress(`  ${names.join(', ')} into ${dir} (the first build takes minutes; later runs reuse it)`)
    const buildEnv = {...env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly -buildvcs=false'}
    for (const [index, name] of names.entries()) {
      const t0 = Date.now()
      const args = buildArgs(name, versions)
      const total = await run('go', ['list', '-deps', PACKAGES[name]], {env: buildEnv, cwd: CONTROLPLANE_MODULE_DIR})
        .then((out) => out.split('\n').filter((line) => line !== '').length)
        .catch(() => undefined)
      progress(`  [${index + 1}/${names.length}] go build ${PACKAGES[name]} -> ${name}${total === undefined ? '' : ` (${total} packages)`}`)
      let compiled = 0
      const ticker = setInterval(() => {
        const seconds = Math.round((Date.now() - t0) / 1000)
        const packages = compiled === 0 ? 'linking or downloading' : `${compiled}${total === undefined ? '' : ` of at most ${total}`} packages compiled`
        progress(`  still building ${name} (${seconds}s, ${packages})`)
      }, 15_000)
      try {
        // -v names each package as it is compiled (not those Go's build cache already holds).
        await run('go', [...args.slice(0, -1), '-v', '-o', path.join(staging, name), ...args.slice(-1)], {
          env: buildEnv,
          cwd: CONTROLPLANE_MODULE_DIR,
          onStderrLine: () => compiled++,
        })
      } finally {
        clearInterval(ticker)
      }
      await rename(path.join(staging, name), path.join(dir, name))
      progress(`  built ${name} in ${Math.round((Date.now() - t0) / 1000)}s`)
    }
    await writeFile(path.join(dir, 'VERSION'), `kubernetes ${versions.kubernetes}\netcd ${versions.etcd}\n${go}\n`)
    progress(`Control plane built in ${Math.round((Date.now() - started) / 1000)}s`)
  } finally {
    await rm(staging, {recursive: true, force: true})
  }
}

/** Runs a command to completion; rejects with its stderr when it fails. */
export function run(
  command: string,
  args: string[],
  options: {env?: NodeJS.ProcessEnv; cwd?: string; input?: string; onStderrLine?: (line: string) => void} = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {env: options.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    let partial = ''
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString()
      stderr += text
      if (options.onStderrLine === undefined) return
      const lines = (partial + text).split('\n')
      partial = lines.pop() ?? ''
      for (const line of lines) options.onStderrLine(line)
    })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code === 0) resolve(stdout)
      // The end of stderr: `go build -v` names every package it compiled before the error.
      else reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${(stderr.trim() || stdout.trim()).slice(-4000)}`))
    })
    // A command that exits before reading its input closes the pipe under the write (EPIPE): its exit
    // code says what happened.
    child.stdin.on('error', () => {})
    child.stdin.end(options.input ?? '')
  })
}
