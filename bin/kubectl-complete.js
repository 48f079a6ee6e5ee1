#!/usr/bin/env node
// kubectl_complete-ironpool (package.json "bin"): kubectl runs it to complete `kubectl ironpool ...`
// (src/cli/completion/kubectl-completion.ts). It starts as bin/run.js does, through bin/launch.js: on a Node
// that is not 24, it runs again under the Node 24 ironpool's install brought. No Node flags in the
// shebang: ironpool's (bin/run.js) are for its long-running processes, and this one lives for a TAB.
import * as nodeModule from 'node:module'
import {launch} from './launch.js'

launch(import.meta.url, () => {
  // The compile cache, as for bin/run.js: a TAB after the first one does not compile the bundle again.
  nodeModule.enableCompileCache?.()
  void import('../dist/ironpool/kubectl-complete.js')
})
