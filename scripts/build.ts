/**
 * The one build of ironpool: src/ bundled by esbuild into dist/ironpool/, which bin/run.js runs, and
 * with it `npm start`, `npm test`, the benches and the image. Why a bundle: unbundled, the process
 * loads thousands of ESM files (`@kubernetes/client-node` alone takes a bare Node from 42 to 125 MiB
 * and 1.6 s); bundled, the same code is a few files read and compiled once (bench/README.md, issue 12).
 *
 * Entry points, each a file in dist/ironpool/ (code splitting shares the modules between them):
 * - main.js: oclif's execute(), for bin/run.js;
 * - commands.js: the explicit command list (package.json `oclif.commands`); each command imports its
 *   heavy modules when it runs, which esbuild puts in chunks of their own, read only by that command;
 * - reaper.js: the control plane's reaper, a script the harness starts beside its own module;
 * - kubectl-complete.js: kubectl's plugin completer (bin/kubectl-complete.js), which reads
 *   completion-tree.json, the command table written here from oclif's commands once they are built,
 *   so that completing a command word loads neither oclif nor the commands.
 * All of them sit two levels below the package root, as src/<dir>/<file>.ts do, so the paths modules
 * compute from import.meta.url (bin/run.js, deploy/, controlplane/, reaper.js) hold in the bundle too.
 *
 * Source maps (without the sources' text, and of src/ only: src-only-source-maps.ts says why) let
 * bin/run.js name src/ files in stack traces.
 * `--metafile` writes dist/ironpool/meta.json, for esbuild's analyser or `--analyze` to print sizes.
 */
import type * as esbuild from 'esbuild'
import {isBuiltin} from 'node:module'
import {rm, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {completionCommands} from '../src/cli/completion/completion-tree.ts'
import {keepOwnSourceMaps} from './src-only-source-maps.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
export const OUT_DIR = path.join(ROOT, 'dist', 'ironpool')

/**
 * client-node's config.js (KubeConfig) takes two names from the generated layer's index, which
 * re-exports every API class and model: reached through it, all of that is in every process that
 * loads a kubeconfig. Here that one import is answered by a module exporting just those two names
 * from their own files, so the generated layer loads only where src/ itself imports from it (and
 * src/kube/http/client-node.ts imports nothing of it). If a client-node upgrade makes config.js take more
 * names, the build fails naming the missing export. Figures: bench/README.md, issue 12.
 */
const narrowClientNodeConfig: esbuild.Plugin = {
  name: 'narrow-client-node-config',
  setup(build) {
    const configJs = path.join('@kubernetes', 'client-node', 'dist', 'config.js')
    build.onResolve({filter: /^\.\/gen\/index\.js$/}, (args) =>
      args.importer.endsWith(configJs) ? {path: path.join(path.dirname(args.importer), 'gen', 'config-names.js'), namespace: 'client-node-config'} : undefined,
    )
    build.onLoad({filter: /.*/, namespace: 'client-node-config'}, (args) => ({
      contents: "export {createConfiguration} from './configuration.js'\nexport {ServerConfiguration} from './servers.js'\n",
      resolveDir: path.dirname(args.path),
      loader: 'js',
    }))
  },
}

/** esbuild, or an error that says what to do: a worktree set up before it was a devDependency lacks it. */
async function loadEsbuild(): Promise<typeof esbuild> {
  try {
    return await import('esbuild')
  } catch (error) {
    throw new Error('esbuild is not installed: run `npm ci` (the build bundles with esbuild, a devDependency)', {cause: error})
  }
}

/**
 * client-node imports undici at the top of its modules: Agent and ProxyAgent for the dispatchers
 * config.js builds, fetch for its HTTP library. ironpool builds its own dispatchers
 * (src/kube/http/node-dispatcher.ts), keeps client-node's only for a proxied cluster, and sends nothing
 * through client-node's fetch. Its imports are answered by stand-ins that load undici on first use,
 * so a process that never talks through a proxy never runs its megabyte of code nor compiles its
 * WebAssembly parser (bench/README.md).
 */
const lazyUndiciForClientNode: esbuild.Plugin = {
  name: 'lazy-undici-for-client-node',
  setup(build) {
    const clientNode = `${path.sep}${path.join('@kubernetes', 'client-node', 'dist')}${path.sep}`
    build.onResolve({filter: /^undici$/}, (args) =>
      args.importer.includes(clientNode) && args.kind === 'import-statement' ? {path: path.join(path.dirname(args.importer), 'lazy-undici.js'), namespace: 'lazy-undici'} : undefined,
    )
    build.onLoad({filter: /.*/, namespace: 'lazy-undici'}, (args) => ({
      contents: [
        'let undici',
        "const load = () => (undici ??= require('undici'))",
        'export class Agent { constructor(options) { return new (load().Agent)(options) } }',
        'export class ProxyAgent { constructor(options) { return new (load().ProxyAgent)(options) } }',
        'export function fetch(...args) { return load().fetch(...args) }',
        '',
      ].join('\n'),
      resolveDir: path.dirname(args.path),
      loader: 'js',
    }))
  },
}

/**
 * Node's built-in modules, imported as ESM, get an ESM facade that reads every export once, getters
 * included: node:http's WebSocket getter loads Node's own undici, node:tls's rootCertificates parses
 * the CA store, node:crypto's webcrypto builds WebCrypto. For the builtins a poollet imports that was
 * 13 MiB of RSS before any work (`node -e` vs `node --input-type=module -e`, bench/README.md). Here
 * each ESM import of a builtin is answered by a CommonJS module that requires it: esbuild then turns
 * named imports into property reads at the point of use, and nothing is read that is not used.
 */
const builtinsByRequire: esbuild.Plugin = {
  name: 'builtins-by-require',
  setup(build) {
    build.onResolve({filter: /^[a-z_/:]+$/}, (args) => {
      if (args.namespace === 'builtin-by-require') return {path: args.path, external: true}
      if (args.kind !== 'import-statement' || !isBuiltin(args.path)) return undefined
      return {path: args.path, namespace: 'builtin-by-require'}
    })
    build.onLoad({filter: /.*/, namespace: 'builtin-by-require'}, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path.startsWith('node:') ? args.path : `node:${args.path}`)})\n`,
      loader: 'js',
    }))
  },
}

/**
 * dist/ironpool/completion-tree.json: the commands as `ironpool completion` sees them (oclif's
 * config.commands, from the commands.js just built, through the same completionCommands()), for
 * kubectl's plugin completer. oclif must not look for TypeScript here either (src/main.ts).
 */
async function writeCompletionTree(): Promise<void> {
  const {Config, settings} = await import('@oclif/core')
  settings.enableAutoTranspile = false
  const config = await Config.load(ROOT)
  await writeFile(path.join(OUT_DIR, 'completion-tree.json'), `${JSON.stringify(completionCommands(config.commands))}\n`)
}

export async function build(options: {metafile?: boolean; analyze?: boolean} = {}): Promise<esbuild.BuildResult> {
  const esbuild = await loadEsbuild()
  await rm(path.join(ROOT, 'dist'), {recursive: true, force: true})
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: {main: 'src/main.ts', commands: 'src/commands/index.ts', reaper: 'src/controlplane/reaper.ts', 'kubectl-complete': 'src/cli/kubectl-complete.ts'},
    outdir: OUT_DIR,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    sourcemap: 'linked',
    sourcesContent: false,
    // Many dependencies are CommonJS and call require() on Node's builtins, which ESM output has
    // no binding for: give the bundle one.
    banner: {js: "import {createRequire as __ironpoolCreateRequire} from 'node:module'; const require = __ironpoolCreateRequire(import.meta.url);"},
    // oclif's TypeScript support for linked plugins in development: never reached by a packaged CLI
    // (src/main.ts turns it off), and TypeScript alone would add 10 MB to the bundle.
    external: ['typescript', 'ts-node', 'tsx', 'tsx/*'],
    // Whitespace and syntax minified: Node keeps each loaded file's source text in memory, and the
    // smaller text saves ~10 MiB of RSS in every process (bench/README.md). Identifiers are kept, so
    // stack traces and profiles keep their names; src/ frames map back through the source maps.
    minifyWhitespace: true,
    minifySyntax: true,
    minifyIdentifiers: false,
    keepNames: true,
    metafile: options.metafile === true || options.analyze === true,
    logLevel: 'warning',
    legalComments: 'none',
    plugins: [narrowClientNodeConfig, lazyUndiciForClientNode, builtinsByRequire],
  })
  await keepOwnSourceMaps(OUT_DIR)
  await writeCompletionTree()
  if (result.metafile !== undefined) {
    await writeFile(path.join(OUT_DIR, 'meta.json'), JSON.stringify(result.metafile))
    if (options.analyze === true) process.stdout.write(await esbuild.analyzeMetafile(result.metafile))
  }
  return result
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await build({metafile: process.argv.includes('--metafile'), analyze: process.argv.includes('--analyze')})
}
