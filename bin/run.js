#!/usr/bin/env -S node --max-semi-space-size=1
// The shebang's flags are ironpool's Node flags, in this one place: npm's bin link, the image's
// ENTRYPOINT and `npm start` run this file by it, and what starts ironpool under process.execPath
// (the sandbox, the tests, the benches) reads them from it (src/cli/ironpool-process.ts).
// --max-semi-space-size=1 (MiB) caps V8's young generation, which otherwise grows with the heap's
// traffic up to 64 MiB per semi-space: an idle poollet went from 98 to 162 MiB resident in three
// minutes of heartbeats that way, and held 112 with the cap (bench/README.md, issue 12).
import {enableCompileCache} from 'node:module'
import process from 'node:process'

// V8's compiled code of the bundle is kept on disk (Node's compile cache, in the OS's temporary
// directory unless NODE_COMPILE_CACHE says where), so a command after the first one on a machine
// does not compile the bundle again. Where nothing can be written, the cache is simply off.
enableCompileCache()

// ironpool runs its bundle, dist/ironpool/ (scripts/build.ts, `npm run build`). Source maps are turned
// on before the bundle loads, since only files loaded afterwards get them: stack traces name src/ files.
process.setSourceMapsEnabled(true)

/** @type {() => Promise<{execute: (options: {dir: string}) => Promise<unknown>}>} */
const loadBundle = () => import('../dist/ironpool/main.js')

// Not awaited at top level: oclif ends the process itself (with the command's exit code), and an
// exit during a pending top-level await makes Node print a spurious warning.
void loadBundle().then(({execute}) => execute({dir: import.meta.url}))
