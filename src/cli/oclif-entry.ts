/** oclif's execute, as the CLI runs it: loaded by src/main.ts once the process's V8 tiers are settled. */
import {execute, settings} from '@oclif/core'

// The CLI runs its bundle, never TypeScript: oclif must not look for tsconfig.json, tsx or ts-node.
settings.enableAutoTranspile = false

export {execute}
