import {expect} from 'chai'
import {BindAddressError, formatBindAddress, parseBindAddress, type BindAddress} from '../../../src/observe/bind-address.ts'

describe('parseBindAddress', () => {
  const accepted: Array<[string, BindAddress | undefined, string]> = [
    [':8080', {host: undefined, port: 8080}, 'every interface, port 8080'],
    ['127.0.0.1:0', {host: '127.0.0.1', port: 0}, 'loopback, ephemeral port'],
    ['0.0.0.0:8081', {host: '0.0.0.0', port: 8081}, 'IPv4 any'],
    ['localhost:9000', {host: 'localhost', port: 9000}, 'a host name'],
    ['[::1]:8080', {host: '::1', port: 8080}, 'IPv6 loopback in brackets'],
    [':65535', {host: undefined, port: 65535}, 'the highest port'],
    ['0', undefined, 'off'],
    ['', undefined, 'off'],
  ]
  for (const [text, address, meaning] of accepted) {
    it(`${JSON.stringify(text)} is ${meaning}`, () => {
      expect(parseBindAddress(text)).to.deep.equal(address)
    })
  }

  const refused: Array<[string, string]> = [
    ['8080', 'missing ":" before the port (":8080"?)'],
    ['localhost', 'missing port'],
    [':http', 'port must be a number from 0 to 65535'],
    [':65536', 'port must be a number from 0 to 65535'],
    [':', 'port must be a number from 0 to 65535'],
    ['::1:8080', 'an IPv6 host goes in brackets'],
    ['[::1:8080', 'an IPv6 host goes in brackets'],
  ]
  for (const [text, why] of refused) {
    it(`${JSON.stringify(text)} is refused: ${why}`, () => {
      expect(() => parseBindAddress(text)).to.throw(BindAddressError, `${JSON.stringify(text)} is not a bind address: ${why}`)
    })
  }

  it('formats back to text it reads', () => {
    for (const text of [':8080', '127.0.0.1:0', '[::1]:8080', '0']) expect(formatBindAddress(parseBindAddress(text))).to.equal(text)
  })
})
