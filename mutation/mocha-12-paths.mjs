// Loaded before Stryker (NODE_OPTIONS in package.json's "mutation" script, inherited by its checker and
// test runner processes). @stryker-mutator/mocha-runner 10.1.1 requires mocha's CLI helpers by their
// old names (lib/cli/run-helpers, lib/cli/collect-files, lib/cli/options or options.mjs); mocha 12.0.3
// ships them as .cjs files, so the runner fails to load ("Cannot find TestRunner plugin mocha"). This
// resolve hook (Node 24's module.registerHooks, for require and import alike) maps those names to the
// .cjs files and touches nothing else. Delete it once the runner finds mocha 12's files itself.
import {registerHooks} from 'node:module'

const CLI_HELPER = /[\\/]mocha[\\/]lib[\\/]cli[\\/](run-helpers|collect-files|options)(\.mjs)?$/

registerHooks({
  resolve(specifier, context, nextResolve) {
    const match = CLI_HELPER.exec(specifier)
    if (match === null) return nextResolve(specifier, context)
    return nextResolve(specifier.slice(0, match.index) + specifier.slice(match.index).replace(/(\.mjs)?$/, '.cjs'), context)
  },
})
