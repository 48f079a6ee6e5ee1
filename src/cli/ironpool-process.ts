/**
 * How to start `ironpool` as a process of its own, the way its users do. The Node flags it runs with
 * live in one place, bin/run.js's shebang, by which npm's bin link, the image's ENTRYPOINT and
 * `npm start` start it. What starts ironpool under process.execPath instead (the sandbox's children,
 * the tests, the benches) reads the flags from there, so each of those processes has the heap that a
 * Deployment's process has.
 */
import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {shebangNodeFlags} from '../../bin/launch.js'

// The shebang's reader is bin/launch.js's, which also relaunches ironpool under Node 24 with them.
export {nodeFlagWords, shebangNodeFlags} from '../../bin/launch.js'

/** bin/run.js, relative to this module: src/cli/ in the sources, dist/ironpool/ in the bundle. */
export const IRONPOOL_BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

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
