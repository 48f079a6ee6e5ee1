import {existsSync, globSync} from 'node:fs'
import {createRequire} from 'node:module'
import {expect} from 'chai'

// npm test's file order (test/parallel.mocharc.cjs): every test file exactly once, the measured slowest first.
const config = createRequire(import.meta.url)('../../parallel.mocharc.cjs') as {
  spec: string[]
  parallel: boolean
  SLOWEST_FIRST: string[]
}

describe('npm test\'s parallel file order', () => {
  it('runs every unit and integration test file exactly once', () => {
    const all = globSync('test/{unit,integration}/**/*.test.ts').map((file) => file.split('\\').join('/')).sort()
    expect([...config.spec].sort()).to.deep.equal(all)
    expect(config.parallel).to.equal(true)
  })

  it('starts with the files measured slowest, each of which exists (a renamed one would lose its place)', () => {
    expect(config.SLOWEST_FIRST.filter((file) => !existsSync(file))).to.deep.equal([])
    expect(config.spec.slice(0, config.SLOWEST_FIRST.length)).to.deep.equal(config.SLOWEST_FIRST)
  })
})
