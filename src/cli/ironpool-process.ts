/**
 * How to start `ironpool` as a process of its own, the way its users do. The Node flags it runs with
 * live in one place, bin/run.js's shebang, by which npm's bin link, the image's ENTRYPOINT and
 * `npm start` start it. What starts ironpool under process.execPath instead (the sandbox's children,
 * the tests, the benches) reads the flags from there, so each of those processes has the heap that a
 * Deployment's process has.
 */
import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

/** bin/run.js, relative to this module: src/cli/ in the sources, dist/ironpool/ in the bundle. */
export const IRONPOOL_BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

const SHEBANG = /^#!\/usr\/bin\/env(?: -S)? node((?: +\S+)*) *$/

/**
 * The flags a shebang line gives node: `#!/usr/bin/env -S node --a --b=1` gives ['--a', '--b=1'].
 * Throws on any other line, so that a shebang this cannot read fails every start, not just some.
 */
export function shebangNodeFlags(line: string): string[] {
  const match = SHEBANG.exec(line)
  if (match === null) throw new Error(`not a "#!/usr/bin/env -S node [--flag ...]" line: ${JSON.stringify(line)}`)
  return nodeFlagWords(match[1] ?? '', JSON.stringify(line))
}

/** Space-separated words as Node flags; throws naming the first that is not a --flag, and where it was. */
export function nodeFlagWords(text: string, where: string): string[] {
  const flags = text.trim().split(/\s+/).filter((flag) => flag !== '')
  const odd = flags.find((flag) => !flag.startsWith('--'))
  if (odd !== undefined) throw new Error(`${JSON.stringify(odd)} in ${where} is not a --flag`)
  return flags
}

let binFlags: string[] | undefined

/** The Node flags of bin/run.js's shebang (read once). */
export function ironpoolNodeFlags(): string[] {
  binFlags ??= shebangNodeFlags(readFileSync(IRONPOOL_BIN, 'utf8').split('\n', 1)[0] ?? '')
  return [...binFlags]
}

/**
 * The command and arguments that run `ironpool <args>` under this process's Node, with bin/run.js's
 * flags, or with nodeFlags in their place (a bench comparing heap settings).
 */
export function ironpoolCommand(args: readonly string[], nodeFlags: readonly string[] = ironpoolNodeFlags()): {command: string; args: string[]} {
  return {command: process.execPath, args: [...nodeFlags, IRONPOOL_BIN, ...args]}
}
