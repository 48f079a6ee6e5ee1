/**
 * The committed src/iri/gen/ is exactly what `npm run proto` makes from src/iri/proto/: editing a
 * proto without regenerating, or hand-editing generated code, fails here.
 */
import {execFile} from 'node:child_process'
import {readFile, readdir} from 'node:fs/promises'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {promisify} from 'node:util'
import {expect} from 'chai'
import {socketDir} from './support.ts'

const iri = fileURLToPath(new URL('../../../src/iri/', import.meta.url))

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, {recursive: true, withFileTypes: true})
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name).slice(root.length)).sort()
}

describe('IRI generated code', () => {
  it('is what the protos generate today', async () => {
    const out = await socketDir()
    try {
      await promisify(execFile)(process.execPath, [join(iri, 'generate.ts'), out.dir], {timeout: 60_000})
      const committed = await filesUnder(join(iri, 'gen'))
      expect(await filesUnder(out.dir)).to.deep.equal(committed)
      expect(committed).to.have.length(3)
      for (const file of committed) {
        const fresh = await readFile(join(out.dir, file), 'utf8')
        expect(fresh, `${file} differs: run npm run proto`).to.equal(await readFile(join(iri, 'gen', file), 'utf8'))
      }
    } finally {
      await out.remove()
    }
  })
})
