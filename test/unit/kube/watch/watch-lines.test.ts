import {expect} from 'chai'
import {LineSplitter} from '../../../../src/kube/watch/watch-request.ts'

function split(chunks: readonly Buffer[]): string[] {
  const lines: string[] = []
  const splitter = new LineSplitter((line) => lines.push(line))
  for (const chunk of chunks) splitter.push(chunk)
  return lines
}

describe('watch stream line splitting', () => {
  it('gives each newline-terminated line once, whatever the chunking', () => {
    const text = '{"type":"ADDED"}\n{"type":"MODIFIED"}\n{"type":"DELETED"}\n'
    const bytes = Buffer.from(text)
    const whole = split([bytes])
    expect(whole).to.deep.equal(['{"type":"ADDED"}', '{"type":"MODIFIED"}', '{"type":"DELETED"}'])
    for (let cut = 1; cut < bytes.length; cut++) expect(split([bytes.subarray(0, cut), bytes.subarray(cut)]), `cut at ${cut}`).to.deep.equal(whole)
    expect(split([...bytes].map((b) => Buffer.from([b])))).to.deep.equal(whole)
  })

  it('decodes a multi-byte character split across chunks', () => {
    const bytes = Buffer.from('{"message":"Grüße ✓"}\n')
    const cut = bytes.indexOf(0xc3) + 1
    expect(split([bytes.subarray(0, cut), bytes.subarray(cut)])).to.deep.equal(['{"message":"Grüße ✓"}'])
  })

  it('holds back a line until its newline arrives, and skips empty lines', () => {
    expect(split([Buffer.from('\n\n{"a":1}\n{"b"'), Buffer.from(':2')])).to.deep.equal(['{"a":1}'])
  })
})
