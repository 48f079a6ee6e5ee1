/** The explicit command list the bundled CLI runs on (package.json `oclif.commands`) names every command file. */
import {expect} from 'chai'
import {readdirSync, readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {COMMANDS} from '../../../src/commands/index.ts'

const COMMANDS_DIR = fileURLToPath(new URL('../../../src/commands/', import.meta.url))

describe('the command list', () => {
  it('has one entry per file in src/commands, with the id oclif gave it from the path', () => {
    const ids = readdirSync(COMMANDS_DIR, {recursive: true, encoding: 'utf8'})
      .filter((file) => file.endsWith('.ts') && file !== 'index.ts')
      .map((file) => file.slice(0, -'.ts'.length).split('/').join(':'))
    expect(Object.keys(COMMANDS).sort()).to.deep.equal(ids.sort())
  })

  it('is what package.json tells oclif to load', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {oclif: {commands: unknown}}
    expect(pkg.oclif.commands).to.deep.equal({strategy: 'explicit', target: './dist/ironpool/commands.js', identifier: 'COMMANDS'})
  })
})
