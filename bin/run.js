#!/usr/bin/env -S node --max-semi-space-size=1 --v8-pool-size=1 --no-memory-reducer
// The shebang's flags are ironpool's Node flags, in this one place: npm's bin link, the image's
// ENTRYPOINT and `npm start` run this file by it, and what starts ironpool under process.execPath
// (the sandbox, the tests, the benches) reads them from it (src/cli/ironpool-process.ts).
// --max-semi-space-size=1 (MiB) caps V8's young generation, which otherwise grows with the heap's
// traffic up to 64 MiB per semi-space: an idle poollet went from 98 to 162 MiB resident in three
// minutes of heartbeats that way, and held 112 with the cap (bench/README.md, issue 12).
// --v8-pool-size=1: one V8 background thread (for GC and compilation) instead of four, each of which
// kept a malloc arena of its own: the controller at 1,000 pools went from 102.8 to 98.6 MiB, for
// 0.3–1.5 µs more CPU per Lease event at 40k events/s (21.8–22.6 against 21.0–21.6).
// --no-memory-reducer: V8's memory reducer runs full GCs in a process that has gone quiet, to give
// memory back; a poollet is quiet between every two heartbeats, and each of those GCs cost it 16–40 ms
// (interpreted: bin/run.js turns the optimizers off below) for the 1–2 MiB a 16 MiB heap gives back:
// 1.7 ms of a 10 s tick's 8.2, ten minutes of six poollets side by side (bench/README.md, issue 21).
// V8 reads it when it sets up the heap, so it cannot be set at run time as --no-opt is below.
// The statements before the bundle parse and run on any Node from 20 on (bin/launch.js): on one that
// is not 24, ironpool runs under the Node 24 its install brought, or says in one line what it needs.
import * as nodeModule from 'node:module'
import process from 'node:process'
import {setFlagsFromString} from 'node:v8'
import {launch} from './launch.js'

launch(import.meta.url, run)

function run() {
  // `ironpool poollet` runs without V8's optimizing compilers (Maglev, TurboFan), on the interpreter and
  // the baseline compiler: its steady work is one small tick every few seconds, which never pays for
  // what the optimizers keep, and their code in the node binary is then never paged in. Its first 13 s
  // took 76.2–76.5 MiB against 84–86, and 83–84 against 103–104 after 1,700 heartbeats, for 0.75–1.2 ms
  // more CPU per warm tick (bench/README.md, issue 12). The poollet's alone: the controller's Lease
  // stream is hot code. Set at run time (Node leaves V8's flags writable) and first of all: set later,
  // from a module of the bundle, start-up had already paged in 2 MiB more of the optimizers.
  if (process.argv[2] === 'poollet') setFlagsFromString('--no-maglev --no-opt')

  // `ironpool controller` has V8 favour memory over speed: a heap grown by less over what is live, and
  // freed pages given back. Its initial lists of 100,000 pools and Leases leave far more garbage than
  // what it keeps, and without it RSS kept that peak: at 100,000 pools and 10,000 Lease events/s, 2,147
  // and 2,161 bytes a pool above a 10-pool controller against 1,336 and 1,399 with it (RssAnon; V8's
  // free pages and malloc's kept most of the difference, not live data), for 25.8–28.4 µs of CPU a Lease
  // event against 24.2–25.2 and a view whole 2–4 s later (7.7 s). bench/README.md, issue 27. Set here,
  // not in the shebang, so the poollet and the operator's commands run as they did.
  if (process.argv[2] === 'controller') setFlagsFromString('--optimize-for-size')

  // V8's compiled code of the bundle is kept on disk (Node's compile cache, in the OS's temporary
  // directory unless NODE_COMPILE_CACHE says where), so a command after the first one on a machine
  // does not compile the bundle again. Where nothing can be written, the cache is simply off.
  nodeModule.enableCompileCache?.()

  // ironpool runs its bundle, dist/ironpool/ (scripts/build.ts, `npm run build`), whose stack traces
  // name src/ files (src/cli/stack-source-maps.ts, installed by the bundle's main.js).

  /** @type {() => Promise<{execute: (options: {dir: string}) => Promise<unknown>}>} */
  const loadBundle = () => import('../dist/ironpool/main.js')

  // Not awaited at top level: oclif ends the process itself (with the command's exit code), and an
  // exit during a pending top-level await makes Node print a spurious warning.
  void loadBundle().then(({execute}) => execute({dir: import.meta.url}))
}
