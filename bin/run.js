#!/usr/bin/env node
import {execute} from '@oclif/core'

// Not awaited at top level: oclif ends the process itself (with the command's exit code), and an
// exit during a pending top-level await makes Node print a spurious warning.
void execute({dir: import.meta.url})
