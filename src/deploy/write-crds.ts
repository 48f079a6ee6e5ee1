/** `npm run crds`: writes deploy/crds from the kinds table. */
import {writeFile} from 'node:fs/promises'
import {fileURLToPath} from 'node:url'
import {renderCrdFiles} from './render-crds.ts'

const dir = fileURLToPath(new URL('../../deploy/crds/', import.meta.url))
for (const [name, text] of renderCrdFiles()) {
  await writeFile(dir + name, text)
  process.stdout.write(`wrote deploy/crds/${name}\n`)
}
