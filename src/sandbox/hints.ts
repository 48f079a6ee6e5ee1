/**
 * What the sandbox tells its user to try from another shell: the installed commands (`ironpool`,
 * `kubectl ironpool`) when `ironpool` is on PATH, else this checkout's bin/run.js and how to install
 * the CLI (README, "Install the CLI").
 */
import {accessSync, constants} from 'node:fs'
import path from 'node:path'
import {IRONPOOL_BIN} from '../cli/ironpool-process.ts'

/** Whether an executable of that name is in one of PATH's folders. */
export function onPath(name: string, pathEnv: string | undefined): boolean {
  return (pathEnv ?? '').split(path.delimiter).some((dir) => {
    if (dir === '') return false
    try {
      accessSync(path.join(dir, name), constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

/** The hint lines, for a sandbox whose first pool is `pool`, started in `cwd`. */
export function operatorHints(options: {pathEnv: string | undefined; cwd: string; pool: string | undefined}): string[] {
  const pool = options.pool ?? 'machine-1'
  if (onPath('ironpool', options.pathEnv)) {
    const kubectl = onPath('kubectl', options.pathEnv) ? ` · kubectl ironpool pool status` : ''
    return [`try (with KUBECONFIG exported): ironpool pool status --watch · ironpool lease inspect ${pool}${kubectl}`]
  }
  const bin = path.relative(options.cwd, IRONPOOL_BIN) || IRONPOOL_BIN
  const local = bin.startsWith('.') || path.isAbsolute(bin) ? bin : `./${bin}`
  return [
    `try (with KUBECONFIG exported): ${local} pool status --watch · ${local} lease inspect ${pool}`,
    `install the CLI as ironpool and kubectl ironpool: npm pack && npm install -g ./ironpool-<version>.tgz (README, "Install the CLI")`,
  ]
}
