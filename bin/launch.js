// @ts-check
/**
 * What bin/run.js does before anything else: run ironpool on this Node if it is the one the bundle is
 * built for (24), else hand the process over to the Node 24 that ironpool's install brings with it
 * (the `node` npm package, a dependency), with ironpool's Node flags; and where there is none, say in
 * one line which Node is needed and how to get it, exit 1. So this file, and bin/run.js's own first
 * statements, are plain JavaScript that parses and runs on old Nodes too (20 and 22 are tested): no
 * import of anything they lack, and builtins reached through require() (an ESM import of a builtin
 * reads all of its exports, getters included, which a Node 24 start-up would pay for).
 */
import * as nodeModule from 'node:module'
import process from 'node:process'

/** The major version of Node that dist/ironpool/ is built for (scripts/build.ts: target node24). */
export const NODE_MAJOR = 24

/** Set on the process a relaunch starts, so that a bundled Node that is not 24 fails instead of looping. */
export const RELAUNCHED_ENV = 'IRONPOOL_RELAUNCHED_NODE'

/** require() of builtins, typed at each use; `resolve` finds the bundled Node. */
const require = /** @type {{(id: string): unknown, resolve: (id: string) => string}} */ (nodeModule.createRequire(import.meta.url))

/** @param {string} version process.versions.node, e.g. '20.20.2' */
export function nodeMajor(version) {
  return Number(version.split('.')[0])
}

/**
 * @typedef {{action: 'run'} | {action: 'relaunch', node: string} | {action: 'refuse', message: string}} LaunchPlan
 */

/**
 * What to do on this Node: run here (Node 24), relaunch under the bundled Node, or refuse in one line.
 * @param {{version: string, execPath: string, relaunched: boolean, bundledNode: () => string | undefined}} here
 * @returns {LaunchPlan}
 */
export function launchPlan(here) {
  if (nodeMajor(here.version) === NODE_MAJOR) return {action: 'run'}
  const node = here.relaunched ? undefined : here.bundledNode()
  if (node !== undefined) return {action: 'relaunch', node}
  const why = here.relaunched
    ? `the Node.js ironpool installed with it (${here.execPath}) is ${here.version}`
    : `this is Node.js ${here.version} (${here.execPath}) and the Node.js ${NODE_MAJOR} ironpool installs with it (npm package "node") is missing`
  return {
    action: 'refuse',
    message:
      `ironpool needs Node.js ${NODE_MAJOR}: ${why}; reinstall ironpool (npm install -g, without --ignore-scripts: ` +
      `the node package's install script fetches it) or put Node.js ${NODE_MAJOR} first on PATH (https://nodejs.org, or \`nvm install ${NODE_MAJOR}\`)`,
  }
}

/**
 * The Node 24 binary of the `node` package ironpool depends on (node_modules/node/bin/node, which its
 * install script links to the platform's build), or undefined when it is not installed.
 * @returns {string | undefined}
 */
export function bundledNode() {
  const fs = /** @type {typeof import('node:fs')} */ (require('node:fs'))
  const path = /** @type {typeof import('node:path')} */ (require('node:path'))
  try {
    const node = path.join(path.dirname(require.resolve('node/package.json')), 'bin', 'node')
    fs.accessSync(node, fs.constants.X_OK)
    // On Windows the package leaves a placeholder here and puts the binary beside it as node.exe.
    return fs.statSync(node).size > 1024 ? node : undefined
  } catch {
    return undefined
  }
}

const SHEBANG = /^#!\/usr\/bin\/env(?: -S)? node((?: +\S+)*) *$/

/**
 * The flags a shebang line gives node: `#!/usr/bin/env -S node --a --b=1` gives ['--a', '--b=1'].
 * Throws on any other line, so that a shebang this cannot read fails every start, not just some.
 * @param {string} line
 * @returns {string[]}
 */
export function shebangNodeFlags(line) {
  const match = SHEBANG.exec(line)
  if (match === null) throw new Error(`not a "#!/usr/bin/env -S node [--flag ...]" line: ${JSON.stringify(line)}`)
  return nodeFlagWords(match[1] ?? '', JSON.stringify(line))
}

/**
 * Space-separated words as Node flags; throws naming the first that is not a --flag, and where it was.
 * @param {string} text
 * @param {string} where
 * @returns {string[]}
 */
export function nodeFlagWords(text, where) {
  const flags = text
    .trim()
    .split(/\s+/)
    .filter((flag) => flag !== '')
  const odd = flags.find((flag) => !flag.startsWith('--'))
  if (odd !== undefined) throw new Error(`${JSON.stringify(odd)} in ${where} is not a --flag`)
  return flags
}

/** Signals a terminal sends to its whole foreground process group, the relaunched Node included. */
const TERMINAL_SIGNALS = ['SIGINT', 'SIGQUIT']
/** Signals passed on to the relaunched Node. */
const FORWARDED_SIGNALS = ['SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGUSR2', ...TERMINAL_SIGNALS]

/**
 * What a bin file runs first: `run` on Node 24; else its own `script` (its import.meta.url) again
 * under the bundled Node, or the one line that says which Node is needed, exit 1. bin/run.js and
 * bin/kubectl-complete.js start by it.
 * @param {string} script
 * @param {() => void} run
 */
export function launch(script, run) {
  const plan = launchPlan({version: process.versions.node, execPath: process.execPath, relaunched: process.env[RELAUNCHED_ENV] === '1', bundledNode})
  if (plan.action === 'relaunch') relaunch(plan.node, script)
  else if (plan.action === 'refuse') {
    process.stderr.write(`${plan.message}\n`)
    process.exitCode = 1
  } else {
    delete process.env[RELAUNCHED_ENV]
    run()
  }
}

/**
 * Runs a bin file (bin/run.js unless `scriptUrl`, a file: URL, says) again under node with its
 * shebang's flags and this process's arguments. Where this
 * Node can replace its own process (process.execve, Node 22.15 and later) it does, so pid, signals
 * and exit code are simply the new Node's. Else (Node 20) the new Node is a child on the same stdio
 * and in the same process group: SIGTERM, SIGHUP and SIGUSR1/2 are passed on; SIGINT and SIGQUIT from
 * a terminal reach the child by themselves (it is in the foreground group), so they are passed on
 * only when no terminal is attached (ironpool takes a second SIGINT as "exit at once"); its exit code
 * is this process's, and a signal that ended it ends this one.
 * @param {string} node
 * @param {string} [scriptUrl]
 */
export function relaunch(node, scriptUrl) {
  const fs = /** @type {typeof import('node:fs')} */ (require('node:fs'))
  const url = /** @type {typeof import('node:url')} */ (require('node:url'))
  const script = url.fileURLToPath(scriptUrl ?? new url.URL('run.js', import.meta.url))
  const flags = shebangNodeFlags(fs.readFileSync(script, 'utf8').split('\n', 1)[0] ?? '')
  const args = [...flags, script, ...process.argv.slice(2)]
  const env = {...process.env, [RELAUNCHED_ENV]: '1'}
  /** @type {{execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never}} */
  const proc = process
  if (typeof proc.execve === 'function') proc.execve(node, [node, ...args], env)

  const childProcess = /** @type {typeof import('node:child_process')} */ (require('node:child_process'))
  const child = childProcess.spawn(node, args, {stdio: 'inherit', env})
  const terminal = process.stdin.isTTY === true || process.stdout.isTTY === true || process.stderr.isTTY === true
  /** @type {Map<string, () => void>} */
  const listeners = new Map()
  for (const signal of FORWARDED_SIGNALS) {
    const pass = !(terminal && TERMINAL_SIGNALS.includes(signal))
    const listener = () => {
      if (pass && child.exitCode === null && child.signalCode === null) child.kill(/** @type {NodeJS.Signals} */ (signal))
    }
    listeners.set(signal, listener)
    process.on(signal, listener)
  }
  child.on('error', (error) => {
    process.stderr.write(`ironpool: cannot start ${node}: ${error.message}\n`)
    process.exit(1)
  })
  child.on('exit', (code, signal) => {
    for (const [name, listener] of listeners) process.off(name, listener)
    if (signal !== null) process.kill(process.pid, signal)
    else process.exit(code ?? 1)
  })
}
