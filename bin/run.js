#!/usr/bin/env node
import process from 'node:process'

// ironpool runs its bundle, dist/ironpool/ (scripts/build.ts, `npm run build`). Source maps are turned
// on before the bundle loads, since only files loaded afterwards get them: stack traces name src/ files.
process.setSourceMapsEnabled(true)

/** @type {() => Promise<{execute: (options: {dir: string}) => Promise<unknown>}>} */
const loadBundle = () => import('../dist/ironpool/main.js')

// Not awaited at top level: oclif ends the process itself (with the command's exit code), and an
// exit during a pending top-level await makes Node print a spurious warning.
void loadBundle().then(({execute}) => execute({dir: import.meta.url}))
