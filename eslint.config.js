// @ts-check
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {ignores: ['dist/**', 'node_modules/**', 'src/iri/gen/**', 'mutation/reports/**', 'mutation/.stryker-tmp/**']},
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {projectService: {allowDefaultProject: ['*.js', 'bin/run.js', 'bin/kubectl-complete.js', 'test/*.cjs', 'mutation/*.mjs']}, tsconfigRootDir: import.meta.dirname},
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_', varsIgnorePattern: '^_'}],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      // Tests use chai's property assertions (expect(x).to.be.true).
      '@typescript-eslint/no-unused-expressions': 'off',
    },
  },
  {
    // Outside the engine, src/ uses src/core's public face only (STYLE: keep the public surface small).
    files: ['src/**/*.ts'],
    ignores: ['src/core/**'],
    rules: {
      'no-restricted-imports': ['error', {patterns: [{regex: '^(\\.\\./)+core/(?!index\\.ts$)', message: "Import from src/core's index.ts: what it does not export is private to the engine."}]}],
    },
  },
  {
    // client-node's index re-exports its generated layer (1.5 MB of code): values come from the one
    // module that imports them from their own files (src/kube/http/client-node.ts says why); types are free.
    files: ['src/**/*.ts'],
    ignores: ['src/core/**', 'src/kube/http/client-node.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{name: '@kubernetes/client-node', allowTypeImports: true, message: "Import values from src/kube/http/client-node.ts: the package's index pulls client-node's generated layer into the bundle."}],
        patterns: [{regex: '^(\\.\\./)+core/(?!index\\.ts$)', message: "Import from src/core's index.ts: what it does not export is private to the engine."}],
      }],
    },
  },
  {
    // src/core is the engine: no I/O libraries, no ambient time.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {patterns: [
        {group: ['@kubernetes/*', 'nice-grpc*', '@grpc/*', 'pino*', 'prom-client', 'node:fs*', 'node:net', 'node:http*', 'node:child_process'], message: 'src/core is free of I/O: add a port and implement it at the edge.'},
        {regex: '^(\\.\\./)+(kube|iri|observe|commands|app|cli|runtime|sandbox|controlplane|deploy)/', message: 'src/core is free of I/O: add a port and implement it at the edge.'},
      ]}],
      'no-restricted-globals': ['error', {name: 'setTimeout', message: 'Use the Clock port.'}, {name: 'setInterval', message: 'Use the Clock port.'}],
      'no-restricted-properties': ['error', {object: 'Date', property: 'now', message: 'Use the Clock port.'}, {object: 'performance', property: 'now', message: 'Use the Clock port.'}],
    },
  },
  {files: ['**/*.cjs'], ...tseslint.configs.disableTypeChecked},
  {
    files: ['**/*.cjs'],
    languageOptions: {sourceType: 'commonjs', globals: {require: 'readonly', module: 'writable', process: 'readonly', console: 'readonly'}},
    rules: {'@typescript-eslint/no-require-imports': 'off'},
  },
)
