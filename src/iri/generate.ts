/**
 * Regenerates src/iri/gen/ from src/iri/proto/ (`npm run proto`). buf drives the ts-proto plugin,
 * both from node_modules, so a fresh clone needs nothing beyond `npm ci`: no protoc, no downloads.
 *
 * The template is built here rather than kept in a buf.gen.yaml so that the plugin runs on the very
 * Node executing this script (process.execPath): the plugin's own `#!/usr/bin/env node` would pick
 * whatever Node is first on PATH.
 *
 * An optional argument names another output directory; the drift test uses it to check that the
 * committed code is what the protos generate.
 */
import {execFileSync} from 'node:child_process'
import {createRequire} from 'node:module'
import {resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

const here = fileURLToPath(new URL('.', import.meta.url))
const require = createRequire(import.meta.url)

/**
 * ts-proto options. importSuffix=.ts because the project runs its .ts sources directly on Node's
 * type stripping; useExactTypes=false keeps the generated client's argument types plain.
 */
const TS_PROTO_OPTIONS = [
  'outputServices=nice-grpc',
  'outputServices=generic-definitions',
  'useExactTypes=false',
  'esModuleInterop=true',
  'importSuffix=.ts',
  // IRI's int64 fields (quantities, capacities) exceed 2^53 in real pools: bigint reads them without loss.
  'forceLong=bigint',
]

const template = {
  version: 'v2',
  clean: true,
  plugins: [
    {
      local: [process.execPath, require.resolve('ts-proto/build/src/plugin.js')],
      out: process.argv[2] === undefined ? 'gen' : resolve(process.argv[2]),
      opt: TS_PROTO_OPTIONS,
    },
  ],
}

execFileSync(require.resolve('@bufbuild/buf/bin/buf'), ['generate', 'proto', '--template', JSON.stringify(template)], {
  cwd: here,
  stdio: 'inherit',
})
