/**
 * The bundle's entry for bin/run.js (scripts/build.ts): oclif's execute, which reads package.json and
 * loads the explicit command list, src/commands/index.ts.
 */
import {settings} from '@oclif/core'
import {mapStackTraces} from './cli/stack-source-maps.ts'

// The CLI runs its bundle, never TypeScript: oclif must not look for tsconfig.json, tsx or ts-node.
settings.enableAutoTranspile = false

// Stack traces name src/ files (stack-source-maps.ts: mapped when printed, not when each file loads).
mapStackTraces()

export {execute} from '@oclif/core'
