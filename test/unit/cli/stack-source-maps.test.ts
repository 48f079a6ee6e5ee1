import {expect} from 'chai'
import {mkdtempSync, mkdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {pathToFileURL} from 'node:url'
import {formatCallSite} from '../../../src/cli/stack-source-maps.ts'

/** A call site as V8 hands it to Error.prepareStackTrace, with only what formatting reads. */
function site(fileName: string, line: number, column: number, functionName = 'run'): NodeJS.CallSite {
  return {
    getFileName: () => fileName,
    getLineNumber: () => line,
    getColumnNumber: () => column,
    toString: () => `${functionName} (${fileName}:${line}:${column})`,
  } as unknown as NodeJS.CallSite
}

describe('stack-source-maps: frames of the bundle named by their src/ file, mapped when printed', () => {
  let root: string
  let bundle: string
  before(() => {
    root = mkdtempSync(path.join(tmpdir(), 'ironpool-maps-'))
    bundle = path.join(root, 'dist', 'ironpool')
    mkdirSync(bundle, {recursive: true})
    writeFileSync(path.join(bundle, 'chunk-A.js'), 'x()\n')
    // Generated line 1, column 0 is src/kube/a.ts line 10, column 5 (VLQ "AASI": 0, 0, +9, +4).
    writeFileSync(path.join(bundle, 'chunk-A.js.map'), JSON.stringify({version: 3, sources: ['../../src/kube/a.ts'], names: [], mappings: 'AASI'}))
    writeFileSync(path.join(bundle, 'chunk-B.js'), 'y()\n')
  })
  after(() => rmSync(root, {recursive: true, force: true}))

  it("replaces a bundle frame's location with the src/ file, line and column of its map", () => {
    const url = pathToFileURL(path.join(bundle, 'chunk-A.js')).href
    expect(formatCallSite(site(url, 1, 1), bundle)).to.equal(`run (${path.join(root, 'src', 'kube', 'a.ts')}:10:5)`)
  })

  it('takes a plain path as well as a file: URL', () => {
    expect(formatCallSite(site(path.join(bundle, 'chunk-A.js'), 1, 1), bundle)).to.equal(`run (${path.join(root, 'src', 'kube', 'a.ts')}:10:5)`)
  })

  it('leaves a frame as V8 prints it in a bundle file without a map, and outside the bundle', () => {
    const noMap = pathToFileURL(path.join(bundle, 'chunk-B.js')).href
    expect(formatCallSite(site(noMap, 1, 1), bundle)).to.equal(`run (${noMap}:1:1)`)
    const elsewhere = pathToFileURL(path.join(root, 'chunk-A.js')).href
    expect(formatCallSite(site(elsewhere, 1, 1), bundle)).to.equal(`run (${elsewhere}:1:1)`)
    expect(formatCallSite(site('node:internal/timers', 5, 3), bundle)).to.equal('run (node:internal/timers:5:3)')
  })
})
