/** `npm run manifests` (alias `npm run crds`): writes every generated file of deploy/ from src/deploy. */
import {mkdir, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {renderDeployFiles} from './render-manifests.ts'

const deployDir = fileURLToPath(new URL('../../deploy/', import.meta.url))
for (const [name, text] of renderDeployFiles()) {
  const file = path.join(deployDir, name)
  await mkdir(path.dirname(file), {recursive: true})
  await writeFile(file, text)
  process.stdout.write(`wrote deploy/${name}\n`)
}
