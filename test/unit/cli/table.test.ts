import {expect} from 'chai'
import {columnWidths, formatRow, renderTable} from '../../../src/cli/table.ts'

describe('table', () => {
  it('pads every column but the last to its widest cell, three spaces apart, header included', () => {
    const {lines} = renderTable(['NAME', 'READY', 'REASON'], [['p1', 'True', 'HeartbeatReceived'], ['long-pool-name', 'Unknown', 'x']])
    expect(lines).to.deep.equal([
      'NAME             READY     REASON',
      'p1               True      HeartbeatReceived',
      'long-pool-name   Unknown   x',
    ])
  })

  it('leaves the header out when asked (--no-headers)', () => {
    const {lines} = renderTable(['NAME', 'KIND'], [['p1', 'machine']], {headers: false})
    expect(lines).to.deep.equal(['p1   machine'])
  })

  it('measures width on the plain text, so colour codes never shift a column', () => {
    const paint = (text: string) => `\u001b[32m${text}\u001b[39m`
    const {lines} = renderTable(['READY', 'REASON'], [[{text: 'True', paint}, 'ok'], ['Unknown', 'x']])
    expect(lines[1]).to.equal('\u001b[32mTrue\u001b[39m      ok')
    expect(lines[2]).to.equal('Unknown   x')
  })

  it('keeps given widths for later rows and lets a longer value overflow (watch rows)', () => {
    const widths = columnWidths(['NAME', 'READY'], [['p1', 'True']])
    expect(widths).to.deep.equal([4, 5])
    expect(formatRow(['p2', 'False'], widths)).to.equal('p2     False')
    expect(formatRow(['a-longer-name', 'True'], widths)).to.equal('a-longer-name   True')
  })

  it('has no trailing blanks on any line', () => {
    const {lines} = renderTable(['A', 'B'], [['x', ''], ['yyyy', 'z']])
    for (const line of lines) expect(line).to.equal(line.trimEnd())
  })
})
