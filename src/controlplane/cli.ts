/**
 * `npm run controlplane`: finds or builds the control plane binaries the sandbox and most tests run
 * (kube-apiserver, kubectl, etcd) and says where they are; `-- --all` adds kube-controller-manager,
 * which the suite otherwise builds when its first CSR signer test starts.
 */
import {BINARY_NAMES, CORE_BINARIES, ensureBinaries} from './binaries.ts'

try {
  const started = Date.now()
  const names = process.argv.includes('--all') ? BINARY_NAMES : CORE_BINARIES
  const binaries = await ensureBinaries({names, progress: (line) => process.stderr.write(`${line}\n`)})
  process.stderr.write(`control plane binaries from ${binaries.source} (${Date.now() - started} ms)\n`)
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
}
