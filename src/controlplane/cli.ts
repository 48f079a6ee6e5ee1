/** `npm run controlplane`: finds or builds the control plane binaries and says where they are. */
import {ensureBinaries} from './binaries.ts'

try {
  const started = Date.now()
  const binaries = await ensureBinaries({progress: (line) => process.stderr.write(`${line}\n`)})
  process.stderr.write(`control plane binaries from ${binaries.source} (${Date.now() - started} ms)\n`)
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
}
