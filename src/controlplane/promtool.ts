/**
 * Finds or builds promtool, which the tests run on ironpool's alerting rules and metrics: from
 * $PROMTOOL when set (used as is), else the cache, else a `go build` of
 * github.com/prometheus/prometheus/cmd/promtool pinned in controlplane/promtool/go.mod (a module of its
 * own, so the control plane's cache name does not move with it). Cached as the control plane is, under
 * ${XDG_CACHE_HOME:-~/.cache}/ironpool/promtool/<version>-<recipe hash>/, outside the repository.
 */
import {createHash} from 'node:crypto'
import {existsSync} from 'node:fs'
import {mkdir, mkdtemp, readFile, rename, rm} from 'node:fs/promises'
import {homedir} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {run} from './binaries.ts'

export const PROMTOOL_MODULE_DIR = fileURLToPath(new URL('../../controlplane/promtool/', import.meta.url))
const PACKAGE = 'github.com/prometheus/prometheus/cmd/promtool'
const MODULE = 'github.com/prometheus/prometheus'

/** The pinned module version (v0.316.0) and the Prometheus release it is (3.16.0). */
export async function promtoolVersion(moduleDir = PROMTOOL_MODULE_DIR): Promise<{module: string; release: string}> {
  const goMod = await readFile(path.join(moduleDir, 'go.mod'), 'utf8')
  const match = new RegExp(`^\\s*${MODULE.replaceAll('.', '\\.')}\\s+v0\\.(\\d+)\\.(\\d+)`, 'm').exec(goMod)
  if (!match?.[1] || !match[2]) throw new Error(`${moduleDir}go.mod does not pin ${MODULE}`)
  const minor = Number(match[1])
  // Prometheus publishes release 3.X.Y as Go module v0.3XX.Y.
  return {module: `v0.${match[1]}.${match[2]}`, release: `${Math.floor(minor / 100)}.${minor % 100}.${match[2]}`}
}

function buildArgs(release: string): string[] {
  return ['build', '-trimpath', `-ldflags=-s -w -X github.com/prometheus/common/version.Version=${release}`, PACKAGE]
}

async function cacheDir(env: NodeJS.ProcessEnv): Promise<string> {
  const {module, release} = await promtoolVersion()
  const hash = createHash('sha256')
  for (const file of ['go.mod', 'go.sum']) hash.update(await readFile(path.join(PROMTOOL_MODULE_DIR, file)))
  hash.update(buildArgs(release).join(' '))
  const root = path.join(env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'ironpool', 'promtool')
  return path.join(root, `${module}-${hash.digest('hex').slice(0, 10)}`)
}

export interface EnsurePromtoolOptions {
  env?: NodeJS.ProcessEnv
  /** Progress lines: the first build takes several minutes. */
  progress?: (line: string) => void
}

/** The path of a promtool binary, building it once when neither $PROMTOOL nor the cache has one. */
export async function ensurePromtool(options: EnsurePromtoolOptions = {}): Promise<string> {
  const env = options.env ?? process.env
  const progress = options.progress ?? (() => {})
  if (env.PROMTOOL) {
    if (!existsSync(env.PROMTOOL)) throw new Error(`PROMTOOL=${env.PROMTOOL} does not exist`)
    return env.PROMTOOL
  }
  const dir = await cacheDir(env)
  const binary = path.join(dir, 'promtool')
  if (existsSync(binary)) return binary
  const {release} = await promtoolVersion()
  await mkdir(path.dirname(dir), {recursive: true})
  // Built beside the target and renamed into place: an interrupted or concurrent build leaves no half entry.
  const staging = await mkdtemp(`${dir}.building-`)
  const started = Date.now()
  const ticker = setInterval(() => progress(`  still building promtool (${Math.round((Date.now() - started) / 1000)}s)`), 15_000)
  try {
    progress(`Building promtool ${release} with Go into ${dir} (the first build takes several minutes; later runs reuse it)`)
    const args = buildArgs(release)
    await run('go', [...args.slice(0, -1), '-o', path.join(staging, 'promtool'), ...args.slice(-1)], {
      env: {...env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly -buildvcs=false'},
      cwd: PROMTOOL_MODULE_DIR,
    })
    try {
      await rename(staging, dir)
    } catch (error) {
      if (!existsSync(binary)) throw error
    }
    progress(`promtool built in ${Math.round((Date.now() - started) / 1000)}s`)
    return binary
  } catch (error) {
    if (error instanceof Error && /ENOENT/.test(error.message)) throw new Error('promtool is not built and Go was not found: install Go 1.26 or newer, or set PROMTOOL to a promtool binary')
    throw error
  } finally {
    clearInterval(ticker)
    await rm(staging, {recursive: true, force: true})
  }
}
