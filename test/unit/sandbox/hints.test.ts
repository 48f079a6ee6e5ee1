import {expect} from 'chai'
import {mkdir, mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {onPath, operatorHints} from '../../../src/sandbox/hints.ts'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

describe('sandbox hints: the commands to try from another shell', () => {
  let dir: string
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ironpool-hints-'))
    for (const [folder, name, mode] of [['installed', 'ironpool', 0o755], ['installed', 'kubectl', 0o755], ['plain', 'ironpool', 0o644]] as const) {
      await mkdir(path.join(dir, folder), {recursive: true})
      await writeFile(path.join(dir, folder, name), '#!/bin/sh\n', {mode})
    }
  })
  after(async () => {
    await rm(dir, {recursive: true, force: true})
  })

  it('finds executables on PATH only (not a file without the x bit, not an empty entry)', () => {
    expect(onPath('ironpool', path.join(dir, 'installed'))).to.equal(true)
    expect(onPath('ironpool', `::${path.join(dir, 'plain')}`)).to.equal(false)
    expect(onPath('ironpool', undefined)).to.equal(false)
  })

  it('names the installed ironpool and kubectl ironpool when ironpool is on PATH', () => {
    expect(operatorHints({pathEnv: path.join(dir, 'installed'), cwd: ROOT, pool: 'machine-1'})).to.deep.equal([
      'try (with KUBECONFIG exported): ironpool pool status --watch · ironpool lease inspect machine-1 · kubectl ironpool pool status',
    ])
  })

  it("names this checkout's bin/run.js, and how to install the CLI, when it is not", () => {
    const [tryLine, install] = operatorHints({pathEnv: path.join(dir, 'plain'), cwd: ROOT, pool: 'volume-1'})
    expect(tryLine).to.equal('try (with KUBECONFIG exported): ./bin/run.js pool status --watch · ./bin/run.js lease inspect volume-1')
    expect(install).to.include('npm install -g ./ironpool-<version>.tgz')
  })
})
