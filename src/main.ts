/**
 * The bundle's entry for bin/run.js (scripts/build.ts): oclif's execute, which reads package.json and
 * loads the explicit command list, src/commands/index.ts. oclif is imported only once the process's
 * V8 tiers are settled, so that a poollet's start-up already runs as its heartbeat loop will
 * (baseline-tiers.ts says why).
 */
import {keepToBaselineTiers, runsPoollet} from './cli/baseline-tiers.ts'
import {mapStackTraces} from './cli/stack-source-maps.ts'

// Stack traces name src/ files (stack-source-maps.ts: mapped when printed, not when each file loads).
mapStackTraces()

export async function execute(options: {dir: string}): Promise<unknown> {
  if (runsPoollet(process.argv.slice(2))) keepToBaselineTiers()
  const {execute: runOclif} = await import('./cli/oclif-entry.ts')
  return runOclif(options)
}
