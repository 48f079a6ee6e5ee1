/** Root hooks for the whole mocha run. */
export const mochaHooks = {}
