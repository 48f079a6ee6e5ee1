/**
 * Finds or builds the control plane's binaries: kube-apiserver, kubectl, etcd and kube-controller-manager
 * (only its CSR signer runs, and only in the tests that need certificates issued).
 *
 * Order: KUBEBUILDER_ASSETS (envtest's convention: a folder holding the first three, used as is; envtest
 * ships no kube-controller-manager, so there it is optional and only its users fail); else the
 * cache, keyed by the pinned versions; else a build with Go from controlplane/go.mod, whose
 * `require k8s.io/kubernetes` line is the one place the Kubernetes version is pinned.
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
/** What KUBEBUILDER_ASSETS must hold: envtest's three. */
const REQUIRED_IN_ASSETS: readonly BinaryName[] = ['kube-apiserver', 'kubectl', 'etcd']
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

function missingIn(binaries: Binaries, names: readonly BinaryName[] = BINARY_NAMES): string[] {
  return names.filter((name) => !existsSync(binaries[name]))
}

export interface EnsureOptions {
  env?: NodeJS.ProcessEnv
  /** Progress lines (a build takes minutes the first time). */
  progress?: (line: string) => void
}

/** The binaries to run, building them once if neither KUBEBUILDER_ASSETS nor the cache has them. */
export async function ensureBinaries(options: EnsureOptions = {}): Promise<Binaries & {source: string}> {
  const env = options.env ?? process.env
  const progress = options.progress ?? (() => {})
  const assets = env.KUBEBUILDER_ASSETS
  if (assets) {
    const binaries = binariesIn(assets)
    const missing = missingIn(binaries, REQUIRED_IN_ASSETS)
    if (missing.length > 0) {
      throw new Error(`KUBEBUILDER_ASSETS=${assets} lacks ${missing.join(', ')}: it must hold kube-apiserver, kubectl and etcd`)
    }
    return {...binaries, source: `KUBEBUILDER_ASSETS (${assets})`}
  }
  const versions = await pinnedVersions()
  const dir = path.join(cacheRoot(env), await cacheKey(versions))
  const cached = binariesIn(dir)
  if (missingIn(cached).length === 0) return {...cached, source: `cache (${dir})`}

  const go = await goVersion(env)
  if (go === undefined) {
    throw new Error(
      'The control plane binaries are not built and Go was not found. Install Go 1.26 or newer (it builds ' +
        `Kubernetes ${versions.kubernetes} and etcd ${versions.etcd} into ${dir}), or set KUBEBUILDER_ASSETS to a ` +
        'folder holding kube-apiserver, kubectl and etcd.',
    )
  }
  await build(dir, versions, go, env, progress)
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

async function build(dir: string, versions: PinnedVersions, go: string, env: NodeJS.ProcessEnv, progress: (line: string) => void) {
  await mkdir(path.dirname(dir), {recursive: true})
  // Build into a fresh folder beside the target and rename it into place, so an interrupted or
  // concurrent build never leaves a half-filled cache entry behind.
  const staging = await mkdtemp(`${dir}.building-`)
  const started = Date.now()
  const ticker = setInterval(() => progress(`  still building (${Math.round((Date.now() - started) / 1000)}s)`), 15_000)
  try {
    progress(`Building the control plane with ${go}: Kubernetes ${versions.kubernetes}, etcd ${versions.etcd}`)
    progress(`  into ${dir} (the first build takes several minutes; later runs reuse it)`)
    const buildEnv = {...env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly -buildvcs=false'}
    for (const name of BINARY_NAMES) {
      const t0 = Date.now()
      progress(`  go build ${PACKAGES[name]} -> ${name}`)
      const args = buildArgs(name, versions)
      await run('go', [...args.slice(0, -1), '-o', path.join(staging, name), ...args.slice(-1)], {
        env: buildEnv,
        cwd: CONTROLPLANE_MODULE_DIR,
      })
      progress(`  built ${name} in ${Math.round((Date.now() - t0) / 1000)}s`)
    }
    await writeFile(path.join(staging, 'VERSION'), `kubernetes ${versions.kubernetes}\netcd ${versions.etcd}\n${go}\n`)
    try {
      await rename(staging, dir)
    } catch (error) {
      // Another build finished first: its result is as good as ours.
      if (missingIn(binariesIn(dir)).length > 0) throw error
    }
    progress(`Control plane built in ${Math.round((Date.now() - started) / 1000)}s`)
  } finally {
    clearInterval(ticker)
    await rm(staging, {recursive: true, force: true})
  }
}

/** Runs a command to completion; rejects with its stderr when it fails. */
export function run(command: string, args: string[], options: {env?: NodeJS.ProcessEnv; cwd?: string; input?: string} = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {env: options.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code === 0) resolve(stdout)
      else reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr.trim() || stdout.trim()}`))
    })
    child.stdin.end(options.input ?? '')
  })
}
