// @ts-check
// Mutation testing (issue 30): `npm run mutation`. mutation/README.md says what it covers and why, how to
// run one file group, and the scores; mutation/SURVIVORS.md lists the mutants left alive and why no test
// can tell them from the code.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
const config = {
  // Paths below are relative to the repository's root: package.json's script runs Stryker there.
  mutate: [
    'src/core/lifecycle/**/*.ts',
    'src/core/heartbeat/**/*.ts',
    'src/core/leader/**/*.ts',
    'src/core/identity/poollet-csr.ts',
    'src/kube/identity/x509.ts',
  ],
  testRunner: 'mocha',
  mochaOptions: {
    // .mocharc.json's settings (the .ts extension, the root hooks); Node 24 runs the .ts files itself
    // (type stripping), in Stryker's sandbox as in `npm test`.
    config: '.mocharc.json',
    // The unit tests that reach the mutated files (directly or through src/runtime and the CLI's rows).
    spec: [
      'test/unit/core/**/*.test.ts',
      'test/unit/kube/identity/*.test.ts',
      'test/unit/runtime/*.test.ts',
      'test/unit/cli/pool-status-rows.test.ts',
      'test/unit/sim/*.test.ts',
    ],
    // The simulator's fixed seeds, not its 200-seed sweep: the sweep covers nearly every lifecycle,
    // heartbeat and leader mutant and takes 20 s alone, so each surviving mutant it covers would cost
    // 20 s more (about 2 h over a full run on this machine's 2 cores). The fixed seeds replay every
    // defect the simulator found; the sweep stays in `npm test`.
    grep: '/^(?!the fault simulator keeps both promises over).*$/',
  },
  checkers: ['typescript'],
  tsconfigFile: 'mutation/tsconfig.json',
  typescriptChecker: {prioritizePerformanceOverAccuracy: true},
  coverageAnalysis: 'perTest',
  ignoreStatic: true,
  incremental: true,
  incrementalFile: 'mutation/stryker-incremental.json',
  // Two cores shared with the integration tests: one test runner (raise it on an idle machine with
  // `npm run mutation -- --concurrency 2`).
  concurrency: 1,
  // A mutant that loops (a retry that never ends on the fake clock) is cut after 3 s over its tests' own time.
  timeoutMS: 3_000,
  reporters: ['clear-text', 'html', 'json', 'progress'],
  jsonReporter: {fileName: 'mutation/reports/mutation.json'},
  htmlReporter: {fileName: 'mutation/reports/index.html'},
  clearTextReporter: {allowColor: false, logTests: false, reportScoreTable: true, reportMutants: false},
  tempDirName: 'mutation/.stryker-tmp',
  // The sandbox copies what the tests need, not build outputs nor earlier runs.
  ignorePatterns: ['dist', 'mutation/reports', 'mutation/.stryker-tmp', '.ironpool', 'tmp'],
  cleanTempDir: true,
}
export default config
