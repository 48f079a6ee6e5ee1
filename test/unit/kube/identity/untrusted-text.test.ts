import {expect} from 'chai'
import {rawControl} from './raw-control.ts'
import {boundMessage, EVENT_MESSAGE_MAX, quoteUntrusted, UNTRUSTED_VALUE_MAX} from '../../../../src/kube/identity/untrusted-text.ts'

describe('quoteUntrusted: requester text bounded and escaped for messages', () => {
  it('cuts a 1 MB CN to the bound and names its whole length', () => {
    const cn = `system:machinepoollet:${'a'.repeat(1024 * 1024)}`
    const quoted = quoteUntrusted(cn)
    expect(quoted).to.equal(`${cn.slice(0, UNTRUSTED_VALUE_MAX)}…(${cn.length} characters)`)
    expect(quoted.length).to.be.below(UNTRUSTED_VALUE_MAX + 30)
  })

  it('keeps a value of exactly the bound whole, and cuts one character more', () => {
    expect(quoteUntrusted('x'.repeat(10), 10)).to.equal('x'.repeat(10))
    expect(quoteUntrusted('x'.repeat(11), 10)).to.equal(`${'x'.repeat(10)}…(11 characters)`)
  })

  it('escapes ESC, BEL, NUL, DEL, C1 and bidi overrides such as U+202E', () => {
    expect(quoteUntrusted('a\x1b[31mb')).to.equal('a\\x1b[31mb')
    expect(quoteUntrusted('bell\x07')).to.equal('bell\\x07')
    expect(quoteUntrusted('nul\x00')).to.equal('nul\\x00')
    expect(quoteUntrusted('tab\tnl\ncr\r')).to.equal('tab\\x09nl\\x0acr\\x0d')
    expect(quoteUntrusted('del\x7f csi\x9b')).to.equal('del\\x7f csi\\x9b')
    expect(quoteUntrusted('abc\u202edef')).to.equal('abc\\u202edef')
    expect(quoteUntrusted('\u2066\u2069\u200f\u2028')).to.equal('\\u2066\\u2069\\u200f\\u2028')
    expect(rawControl(quoteUntrusted('\x1b\x07\x00\x7f\x85\u202e\u061c'))).to.equal(undefined)
  })

  it('doubles a backslash, so that typed text never reads as an escape', () => {
    expect(quoteUntrusted('a\\x1b')).to.equal('a\\\\x1b')
  })

  it('passes ordinary text unchanged, letters of any script and emoji included', () => {
    for (const text of ['system:bootstrap:abcdef', 'ironpool:machinepoollets', 'Zürich-Øresund café', 'Пул-1 池 プール ☃ 🚀', 'O=a+CN=b, "x" <y>']) {
      expect(quoteUntrusted(text)).to.equal(text)
    }
  })

  it('counts escapes as written and never splits one or a surrogate pair', () => {
    expect(quoteUntrusted('ab\x1b', 4)).to.equal('ab…(3 characters)')
    expect(quoteUntrusted('a🚀🚀', 3)).to.equal('a🚀…(3 characters)')
  })
})

describe('boundMessage: a whole Event message within Kubernetes 1024 bytes', () => {
  it('leaves a short message alone and cuts a long one to 1024 bytes of UTF-8, naming its length', () => {
    expect(boundMessage('short')).to.equal('short')
    const long = 'é'.repeat(3000)
    const bounded = boundMessage(long)
    expect(Buffer.byteLength(bounded, 'utf8')).to.be.at.most(EVENT_MESSAGE_MAX)
    expect(Buffer.byteLength(bounded, 'utf8')).to.be.above(EVENT_MESSAGE_MAX - 4)
    expect(bounded).to.match(/^é+…\(3000 characters\)$/)
  })
})
