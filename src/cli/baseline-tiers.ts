/**
 * V8's optimizing compilers (Maglev and TurboFan) turned off for the whole life of a process whose
 * steady work is one small tick every few seconds: the poollet's. Its code then runs in the
 * interpreter and the baseline compiler (Ignition, Sparkplug), which keep nothing per function beyond
 * bytecode and baseline code, and the compilers' own code in the node binary is never paged in.
 *
 * Why (`npm run bench:poollet`, four runs each; bench/README.md, issue 12):
 * - first 13 s: 76.2–76.8 MiB resident against 83.5–84.8 with every tier; the file-backed part, the
 *   node binary's pages, is 46.8 against 54.2 MiB: start-up alone ran the optimizers, so turning them
 *   off after start-up saved nothing there;
 * - after 1,700 heartbeats (`-- --interval=100ms --warmup-ticks=1500 --ticks=200`): 83.7–84.0 MiB
 *   against 103–104, as the optimizers compiled and recompiled the tick's code;
 * - the price: the first Lease 430–459 ms after spawn against 340–424, and 3.4–4.0 ms of CPU per warm
 *   tick against 2.7–3.15, a few hundredths of a percent of a core at the default 10 s interval.
 * Start-up in the interpreter is affordable because source maps are read only when a stack is printed
 * (stack-source-maps.ts): Node's own support measured every line of the bundle at load, 140 ms of an
 * interpreted start-up.
 *
 * The flags are set at run time, by bin/run.js before anything else (this module is a bundle entry of
 * its own, dist/ironpool/baseline-tiers.js), rather than in its shebang, because they are the
 * poollet's alone: the controller's Lease stream is hot code that needs the optimizers, and the CLI
 * starts faster with them. Before anything else includes Node's compile cache: set after it (from
 * the bundle's main.js), the poollet's first 13 s were 77.5–78.9 MiB against 76.0–76.4, all of it the
 * node binary's pages (48.9 against 46.8 MiB). Node leaves V8's flags writable, and these two only
 * decide whether V8 starts an optimizing compilation.
 */
import {setFlagsFromString} from 'node:v8'

/** The V8 flags that leave every compilation to the interpreter and the baseline compiler. */
export const BASELINE_TIERS_V8_FLAGS: readonly string[] = ['--no-maglev', '--no-opt']

let kept: readonly string[] | undefined

/** From now on, this process's code is not optimized (see the module's comment for why). */
export function keepToBaselineTiers(): readonly string[] {
  setFlagsFromString(BASELINE_TIERS_V8_FLAGS.join(' '))
  kept = BASELINE_TIERS_V8_FLAGS
  return kept
}

/** The flags keepToBaselineTiers() set in this process, or none if it was not called. */
export function baselineTiersFlags(): readonly string[] {
  return kept ?? []
}

/** Whether `ironpool <args>` runs the poollet, whose process keeps to the baseline tiers. */
export function runsPoollet(args: readonly string[]): boolean {
  return args[0] === 'poollet'
}

/** The V8 tiers of a process that runs `ironpool <args>`: the poollet's kept to the baseline ones. */
export function settleV8Tiers(args: readonly string[]): void {
  if (runsPoollet(args)) keepToBaselineTiers()
}
