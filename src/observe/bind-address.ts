/**
 * Listen addresses as controller-runtime's --metrics-bind-address and --health-probe-bind-address
 * read them (Go's net.Listen syntax), so an operator can carry values over: ":8080" is port 8080 on
 * every interface, "127.0.0.1:0" an ephemeral port on loopback, "[::1]:8081" IPv6 loopback, and
 * "0" or "" turns the server off.
 */

export interface BindAddress {
  /** undefined: every interface (Node listens on :: with IPv4 mapped, or 0.0.0.0). */
  readonly host: string | undefined
  /** 0: the system picks a free port; the server reports the one it bound. */
  readonly port: number
}

export class BindAddressError extends Error {
  override readonly name = 'BindAddressError'
}

const MAX_PORT = 65_535

/** The address, or undefined when the text turns the server off. */
export function parseBindAddress(text: string): BindAddress | undefined {
  if (text === '' || text === '0') return undefined
  const invalid = (why: string) => new BindAddressError(`${JSON.stringify(text)} is not a bind address: ${why}; write e.g. ":8080", "127.0.0.1:8080", or "0" for off`)
  const colon = text.lastIndexOf(':')
  if (colon < 0) throw invalid(/^\d+$/.test(text) ? `missing ":" before the port (":${text}"?)` : 'missing port')
  let host = text.slice(0, colon)
  const portText = text.slice(colon + 1)
  if (host.startsWith('[') && host.endsWith(']')) {
    host = host.slice(1, -1)
  } else if (host.includes(':')) {
    throw invalid('an IPv6 host goes in brackets, as in "[::1]:8080"')
  }
  if (host.includes('[') || host.includes(']') || /\s/.test(host)) throw invalid(`bad host ${JSON.stringify(host)}`)
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > MAX_PORT) throw invalid(`port must be a number from 0 to ${MAX_PORT}`)
  return {host: host === '' ? undefined : host, port: Number(portText)}
}

/** The text form parseBindAddress reads back, for logs and help. */
export function formatBindAddress(address: BindAddress | undefined): string {
  if (address === undefined) return '0'
  const host = address.host === undefined ? '' : address.host.includes(':') ? `[${address.host}]` : address.host
  return `${host}:${address.port}`
}
