/**
 * A loopback TCP proxy for fault tests: put it between a client and the kube-apiserver and make the link
 * fail the way networks do, without closing anything.
 *
 * - stall(): every connection, open or new, stops forwarding in both directions. The sockets are paused,
 *   so bytes wait in the kernel's buffers and TCP's flow control holds the sender; nothing is closed or
 *   reset. heal() lets them flow again, in order, with nothing lost.
 * - holdNewConnections(): connections opened from now on are accepted but held (not forwarded) until
 *   heal(); established ones keep flowing.
 * - blackhole(): bytes are read and discarded in both directions until heal(). A TLS stream that lost
 *   bytes is broken for good, so its connection dies of a TLS error after heal().
 * - stallRequests(pattern) and resetRequests(pattern): see "Matching requests" below.
 *
 * Matching requests. kube-apiserver speaks TLS only, so a plain TCP proxy sees ciphertext and cannot tell
 * a list of Leases from a Lease renewal. Holding new connections does not single out a request either:
 * client-node's requests share keep-alive connections (src/kube/http/kubeconfig.ts), so a relist may go over
 * an idle connection that is already open. So the proxy can terminate TLS instead (option `tls`): it serves
 * its own certificate (127.0.0.1, from its own CA, which the proxied kubeconfig trusts) and opens one TLS
 * connection upstream per client connection, presenting the kubeconfig's client certificate when it has
 * one (a token travels in the request's headers and needs nothing). Bytes are forwarded unchanged, HTTP/1.1
 * only (the proxy offers no h2), and the request lines of the plaintext are visible: a connection is
 * stalled as soon as it sends a request matching a pattern, e.g. a list or watch of Leases, so that exact
 * request hangs while every other request answers. One client connection is one upstream connection, so
 * connection-level faults behave as without TLS termination.
 *
 * A lossy link (option `lossy`, with TLS termination): spoilRequests(share) picks that share of the
 * requests (of those matching a pattern), by a pseudo-random sequence from the seed, and corrupts one
 * byte of the first TLS record of each one's response on its way to the client. The client's TLS layer
 * rejects the record (bad record MAC) and fails the connection with a TLS error: the request fails as
 * on a link that garbles data, after the server handled it (a write has landed). Closing or resetting a
 * connection would barely fail a request, since a read whose kept-alive connection was closed is sent
 * again (src/kube/http/node-dispatcher.ts). `spoiled` lists the requests spoilt; `statuses` counts the
 * responses by HTTP status, so a test can count the 429s a client drew.
 */
import {readFile, writeFile} from 'node:fs/promises'
import net from 'node:net'
import {Duplex} from 'node:stream'
import tls from 'node:tls'
import {parse, stringify} from 'yaml'
import {createCertificateAuthority} from '../../src/controlplane/pki.ts'
import {seededRandom} from './seeded-random.ts'

export interface TcpProxyOptions {
  target: {host: string; port: number}
  /** Terminate TLS on both sides (see above): the certificate served to clients, and how to dial upstream. */
  tls?: {
    server: {certPem: string; keyPem: string}
    upstream: {caPem: string; certPem?: string; keyPem?: string}
  }
  /**
   * A link that can spoil requests (TLS termination only): the client side's ciphertext goes through a
   * stream of the proxy's own, where a byte can be corrupted. `seed` makes the choice of requests repeatable.
   */
  lossy?: {seed: number}
}

type Direction = 'up' | 'down'
/** What every connection does: forward, wait (stalled) or drop what it reads (blackhole). */
type Mode = 'forward' | 'stall' | 'blackhole'

/**
 * An HTTP/1.1 request line, as the client sends it first on a connection and after each response. A
 * body has no line end of its own, so the next request's line follows it on the same "line": the match
 * is at the end.
 */
const REQUEST_LINE = /(?:^|[^A-Z])((?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) \/\S* HTTP\/1\.[01])$/

export class TcpProxy {
  private readonly options: TcpProxyOptions
  private readonly server: net.Server
  private readonly links = new Set<Link>()
  private readonly held = new Set<net.Socket>()
  private mode: Mode = 'forward'
  private holdNew = false
  private stallPatterns: RegExp[] = []
  /** Request lines seen (TLS termination only), oldest first: for diagnostics and assertions. */
  readonly requests: string[] = []
  /** Connections accepted since start. */
  accepted = 0
  /** Request lines whose response the lossy link spoilt, oldest first. */
  readonly spoiled: string[] = []
  /** Responses seen (TLS termination only), by HTTP status code. */
  readonly statuses = new Map<number, number>()
  private spoil: {share: number; pattern: RegExp} | undefined
  private readonly random: () => number

  constructor(options: TcpProxyOptions) {
    this.options = options
    this.random = seededRandom(options.lossy?.seed ?? 0)
    this.server = net.createServer((socket) => this.accept(socket))
  }

  /** Listens on 127.0.0.1 (an ephemeral port unless given); resolves with the port. */
  start(port = 0): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(port, '127.0.0.1', () => resolve(this.port))
    })
  }

  get port(): number {
    const address = this.server.address()
    return typeof address === 'object' && address !== null ? address.port : 0
  }

  /** Connections open now (client side). */
  get openConnections(): number {
    return this.links.size + this.held.size
  }

  /** Stops forwarding on every connection, open or new, without closing any. */
  stall(): void {
    this.setMode('stall')
  }

  /** Discards what every connection reads, both ways, until heal(). */
  blackhole(): void {
    this.setMode('blackhole')
  }

  /** New connections are accepted and held until heal(); established ones keep flowing. */
  holdNewConnections(): void {
    this.holdNew = true
  }

  /**
   * With TLS termination: a connection that sends a request whose line ("GET /path?query HTTP/1.1")
   * matches is stalled before the request goes upstream, and stays stalled until heal().
   */
  stallRequests(pattern: RegExp): void {
    if (this.options.tls === undefined) throw new Error('stallRequests needs TLS termination: the proxy sees only ciphertext')
    this.stallPatterns.push(pattern)
  }

  /** With TLS termination: destroys the connections whose last request matches (e.g. an open watch); returns how many. */
  resetRequests(pattern: RegExp): number {
    if (this.options.tls === undefined) throw new Error('resetRequests needs TLS termination: the proxy sees only ciphertext')
    let reset = 0
    for (const link of this.links) {
      if (link.lastRequest !== undefined && pattern.test(link.lastRequest)) {
        link.destroy()
        reset++
      }
    }
    return reset
  }

  /**
   * With TLS termination: ends the response in flight on the connections whose last request matches,
   * cleanly, as the API server ends a watch at its timeout: the terminal chunk at the next chunk
   * boundary, then the connection closes; what the server sends after that is dropped. Returns how many.
   */
  endResponses(pattern: RegExp): number {
    if (this.options.tls === undefined) throw new Error('endResponses needs TLS termination: the proxy sees only ciphertext')
    let ended = 0
    for (const link of this.links) {
      if (link.lastRequest !== undefined && pattern.test(link.lastRequest)) {
        link.endResponse()
        ended++
      }
    }
    return ended
  }

  /**
   * With a lossy link: from now on, spoils this share (0 to 1) of the requests whose line matches the
   * pattern (every request by default), each chosen by the seeded sequence; 0 or heal() stops it.
   */
  spoilRequests(share: number, pattern: RegExp = /^/): void {
    if (this.options.tls === undefined || this.options.lossy === undefined) throw new Error('spoilRequests needs TLS termination and the lossy option')
    if (!(share >= 0 && share <= 1)) throw new Error(`share must be within 0..1, got ${share}`)
    this.spoil = share === 0 ? undefined : {share, pattern}
  }

  /** Forwards everything again: stalled and held connections resume where they were, nothing lost. */
  heal(): void {
    this.holdNew = false
    this.spoil = undefined
    this.stallPatterns = []
    for (const link of this.links) link.stalled = false
    this.setMode('forward')
    for (const socket of [...this.held]) {
      this.held.delete(socket)
      this.connect(socket)
    }
  }

  /** Stops listening and destroys every connection. */
  async close(): Promise<void> {
    for (const link of [...this.links]) link.destroy()
    for (const socket of this.held) socket.destroy()
    this.held.clear()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  /** Called by a link: what it should do now. */
  modeFor(link: Link): Mode {
    if (this.mode === 'blackhole') return 'blackhole'
    return this.mode === 'stall' || link.stalled ? 'stall' : 'forward'
  }

  /** Called by a link for each request line it sees: whether to stall before it, whether to spoil its response. */
  sawRequest(line: string): {stall: boolean; spoil: boolean} {
    this.requests.push(line)
    // One draw per matching request: the choices follow the seed and the order of the requests alone.
    const spoil = this.spoil !== undefined && this.spoil.pattern.test(line) && this.random() < this.spoil.share
    if (spoil) this.spoiled.push(line)
    return {stall: this.stallPatterns.some((p) => p.test(line)), spoil}
  }

  /** Called by a link for each response head it sees. */
  sawResponse(status: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1)
  }

  forget(link: Link): void {
    this.links.delete(link)
  }

  private setMode(mode: Mode): void {
    this.mode = mode
    for (const link of this.links) link.refresh()
  }

  private accept(socket: net.Socket): void {
    this.accepted++
    socket.on('error', () => {})
    if (this.holdNew) {
      // Accepted by the kernel and here, but not read: the client's first bytes wait in the buffer.
      socket.pause()
      this.held.add(socket)
      socket.once('close', () => this.held.delete(socket))
      return
    }
    this.connect(socket)
  }

  private connect(raw: net.Socket): void {
    const {target, tls: tlsOptions} = this.options
    let client: net.Socket = raw
    let upstream: net.Socket
    let tap: RecordTap | undefined
    if (tlsOptions === undefined) {
      upstream = net.connect(target.port, target.host)
    } else {
      if (this.options.lossy !== undefined) tap = new RecordTap(raw)
      client = new tls.TLSSocket(tap ?? raw, {isServer: true, cert: tlsOptions.server.certPem, key: tlsOptions.server.keyPem, ALPNProtocols: ['http/1.1']})
      upstream = tls.connect({
        host: target.host,
        port: target.port,
        ca: tlsOptions.upstream.caPem,
        cert: tlsOptions.upstream.certPem,
        key: tlsOptions.upstream.keyPem,
        ALPNProtocols: ['http/1.1'],
      })
    }
    this.links.add(new Link(this, client, upstream, tlsOptions !== undefined, tap))
  }
}

const TLS_APPLICATION_DATA = 23

/**
 * The client side's ciphertext, between its TLS socket and the TCP socket: passes everything through,
 * and follows the TLS record framing of what goes to the client, so that spoilNextRecord() corrupts the
 * last byte (part of the record's authentication tag) of the next application-data record.
 */
export class RecordTap extends Duplex {
  private readonly raw: net.Socket
  private armed = false
  private readonly header = Buffer.alloc(5)
  private headerBytes = 0
  /** Payload bytes of the current record still to come, and whether its last byte is to be corrupted. */
  private remaining = 0
  private corruptThis = false

  constructor(raw: net.Socket) {
    super()
    this.raw = raw
    raw.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) raw.pause()
    })
    raw.on('end', () => this.push(null))
    raw.on('error', (error) => this.destroy(error))
    raw.on('close', () => this.destroy())
  }

  spoilNextRecord(): void {
    this.armed = true
  }

  override _read(): void {
    this.raw.resume()
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.raw.write(this.frame(chunk), callback)
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.raw.end(callback)
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.raw.destroy()
    callback(error)
  }

  /** Walks the records in the bytes; returns them, with a byte corrupted where one was due. */
  private frame(chunk: Buffer): Buffer {
    let out = chunk
    let i = 0
    while (i < chunk.length) {
      if (this.remaining === 0) {
        this.header[this.headerBytes++] = chunk[i++] as number
        if (this.headerBytes < 5) continue
        this.headerBytes = 0
        this.remaining = this.header.readUInt16BE(3)
        this.corruptThis = this.armed && this.header[0] === TLS_APPLICATION_DATA && this.remaining > 0
        if (this.corruptThis) this.armed = false
        continue
      }
      const take = Math.min(this.remaining, chunk.length - i)
      i += take
      this.remaining -= take
      if (this.remaining === 0 && this.corruptThis) {
        this.corruptThis = false
        if (out === chunk) out = Buffer.from(chunk)
        out[i - 1] = (out[i - 1] as number) ^ 0xff
      }
    }
    return out
  }
}

/** One client connection and its upstream connection, forwarding both ways as the proxy's mode says. */
class Link {
  stalled = false
  lastRequest: string | undefined
  private readonly proxy: TcpProxy
  private readonly sockets: Record<Direction, {from: net.Socket; to: net.Socket}>
  /** Chunks read but not yet written, per direction (read just as a stall began, or held for a matched request). */
  private readonly pending: Record<Direction, Buffer[]> = {up: [], down: []}
  /** The other side ended (FIN) while its direction was stalled: passed on once the pending bytes are. */
  private readonly ended: Record<Direction, boolean> = {up: false, down: false}
  private readonly waitingForDrain: Record<Direction, boolean> = {up: false, down: false}
  private readonly scan: boolean
  private readonly tap: RecordTap | undefined
  /** The response to the request last seen is to be spoilt: its first bytes go out in a corrupted record. */
  private spoilResponse = false
  private partialLine = ''
  /** The framing of the response in flight (TLS termination only), to end it at a chunk boundary. */
  private response = new ChunkedResponse()
  private endingResponse = false
  private closePending = false
  private destroyed = false

  constructor(proxy: TcpProxy, client: net.Socket, upstream: net.Socket, scan: boolean, tap?: RecordTap) {
    this.proxy = proxy
    this.scan = scan
    this.tap = tap
    this.sockets = {up: {from: client, to: upstream}, down: {from: upstream, to: client}}
    for (const direction of ['up', 'down'] as const) {
      const {from} = this.sockets[direction]
      from.on('data', (chunk: Buffer) => this.onData(direction, chunk))
      from.on('end', () => {
        this.ended[direction] = true
        this.flush(direction)
      })
      from.on('error', () => this.closed())
      from.on('close', () => this.closed())
    }
    this.refresh()
  }

  /** Applies the proxy's mode: pause or resume reading, flush what waits, pass on a close that waited. */
  refresh(): void {
    for (const direction of ['up', 'down'] as const) this.flush(direction)
    if (this.closePending && this.proxy.modeFor(this) === 'forward') {
      // What was sent before the close still arrives first, as TCP would deliver it after a partition.
      // Each side closes once it has read the rest; should one not, the link goes after a while anyway.
      for (const {to} of Object.values(this.sockets)) to.end()
      setTimeout(() => this.destroy(), 5_000).unref()
    }
  }

  destroy(): void {
    if (this.destroyed) return
    this.destroyed = true
    for (const {from} of Object.values(this.sockets)) from.destroy()
    this.proxy.forget(this)
  }

  /**
   * One side closed or failed. While the link is cut (stalled or black-holed) the other side does not
   * learn it, as across a real partition: it is told when the link heals.
   */
  private closed(): void {
    if (this.proxy.modeFor(this) === 'forward') this.destroy()
    else this.closePending = true
  }

  /** Ends the response in flight at its next chunk boundary (at once when it is at one). */
  endResponse(): void {
    this.endingResponse = true
    if (this.response.atBoundary) this.finishResponse(Buffer.alloc(0))
  }

  private onData(direction: Direction, chunk: Buffer): void {
    const mode = this.proxy.modeFor(this)
    if (mode === 'blackhole') return
    if (direction === 'up' && this.scan && this.matchesStall(chunk)) this.stalled = true
    if (direction === 'down' && this.scan) {
      const boundary = this.response.feed(chunk, this.endingResponse, (status) => this.proxy.sawResponse(status))
      if (this.spoilResponse) {
        // Armed just before the response's first bytes are written: the record that carries them is spoilt.
        this.spoilResponse = false
        this.tap?.spoilNextRecord()
      }
      if (this.endingResponse) {
        if (boundary !== undefined) this.finishResponse(chunk.subarray(0, boundary))
        return
      }
    }
    this.pending[direction].push(chunk)
    this.flush(direction)
  }

  /** The rest of the response up to a boundary, the terminal chunk, and the end of both connections. */
  private finishResponse(rest: Buffer): void {
    this.endingResponse = false
    // The server's side goes quietly: it is not the client's close to pass on.
    const upstream = this.sockets.down.from
    for (const event of ['data', 'end', 'close', 'error']) upstream.removeAllListeners(event)
    upstream.on('error', () => {})
    upstream.destroy()
    this.pending.down.push(rest, Buffer.from('0\r\n\r\n'))
    this.ended.down = true
    this.flush('down')
  }

  /** True when the chunk holds a request line the proxy wants stalled (lines may span chunks). */
  private matchesStall(chunk: Buffer): boolean {
    const lines = (this.partialLine + chunk.toString('latin1')).split('\r\n')
    // Keep a bounded tail: a request line is short, a request body may not be.
    this.partialLine = (lines.pop() ?? '').slice(-8192)
    let stall = false
    for (const text of lines) {
      const line = REQUEST_LINE.exec(text)?.[1]
      if (line === undefined) continue
      this.lastRequest = line
      // HTTP/1.1 without pipelining: the next bytes down are this request's response.
      this.response = new ChunkedResponse()
      const seen = this.proxy.sawRequest(line)
      if (seen.stall) stall = true
      if (seen.spoil) this.spoilResponse = true
    }
    return stall
  }

  private flush(direction: Direction): void {
    if (this.destroyed) return
    const {from, to} = this.sockets[direction]
    const mode = this.proxy.modeFor(this)
    if (mode === 'blackhole') {
      this.pending[direction] = []
      from.resume()
      return
    }
    if (mode === 'stall') {
      from.pause()
      return
    }
    while (this.pending[direction].length > 0 && !this.waitingForDrain[direction]) {
      const chunk = this.pending[direction].shift() as Buffer
      if (!to.write(chunk)) {
        this.waitingForDrain[direction] = true
        to.once('drain', () => {
          this.waitingForDrain[direction] = false
          this.flush(direction)
        })
      }
    }
    if (this.waitingForDrain[direction]) {
      from.pause()
      return
    }
    if (this.ended[direction]) to.end()
    else from.resume()
  }
}

/**
 * Follows the framing of one HTTP/1.1 response (head, then chunks), to know where a chunk ends: only a
 * chunked body can be ended cleanly in the middle of a stream, as a watch is.
 */
class ChunkedResponse {
  private state: 'head' | 'size' | 'data' | 'crlf' | 'other' = 'head'
  private head = ''
  private sizeLine = ''
  private remaining = 0

  /** Between two chunks of a chunked body. */
  get atBoundary(): boolean {
    return this.state === 'size' && this.sizeLine === ''
  }

  /**
   * Reads the bytes; with findBoundary, returns the offset just past the first chunk boundary in them.
   * Calls onStatus with the status code once the head is complete.
   */
  feed(bytes: Buffer, findBoundary: boolean, onStatus?: (status: number) => void): number | undefined {
    let i = 0
    while (i < bytes.length) {
      if (this.state === 'other') return undefined
      if (this.state === 'data') {
        const take = Math.min(this.remaining, bytes.length - i)
        i += take
        this.remaining -= take
        if (this.remaining === 0) {
          this.state = 'crlf'
          this.remaining = 2
        }
        continue
      }
      const char = String.fromCharCode(bytes[i++] as number)
      if (this.state === 'head') {
        this.head = (this.head + char).slice(-16_384)
        if (!this.head.endsWith('\r\n\r\n')) continue
        const status = /^HTTP\/1\.[01] (\d{3})/.exec(this.head)?.[1]
        if (status !== undefined) onStatus?.(Number(status))
        this.state = /\r\ntransfer-encoding:\s*chunked\r\n/i.test(this.head) ? 'size' : 'other'
      } else if (this.state === 'crlf') {
        if (--this.remaining > 0) continue
        this.state = 'size'
      } else {
        this.sizeLine += char
        if (!this.sizeLine.endsWith('\r\n')) continue
        const size = parseInt(this.sizeLine, 16)
        this.sizeLine = ''
        // The terminal chunk: the body is over, nothing more to end.
        if (!(size > 0)) this.state = 'other'
        else {
          this.state = 'data'
          this.remaining = size
        }
        continue
      }
      if (findBoundary && this.atBoundary) return i
    }
    return undefined
  }
}

/** A proxy in front of the API server of a kubeconfig, and a copy of that kubeconfig that goes through it. */
export interface ProxiedKubeconfig {
  proxy: TcpProxy
  /** Path of the kubeconfig copy whose server is the proxy. */
  kubeconfig: string
}

interface KubeconfigFile {
  clusters: {cluster: {server: string; 'certificate-authority-data'?: string}}[]
  users: {user: {'client-certificate-data'?: string; 'client-key-data'?: string}}[]
}

/**
 * Starts a proxy in front of the server of `source` (a self-contained kubeconfig, as the control plane
 * writes them) and writes `target`, a copy that talks to the proxy. Without TLS termination the copy only
 * changes the server's port: the serving certificate has IP SAN 127.0.0.1, so TLS still verifies end to
 * end. With it, the copy trusts the proxy's own CA and the proxy dials upstream as the kubeconfig's user.
 */
export async function proxyKubeconfig(source: string, target: string, options: {terminateTls?: boolean; lossy?: {seed: number}} = {}): Promise<ProxiedKubeconfig> {
  const config = parse(await readFile(source, 'utf8')) as KubeconfigFile
  const cluster = config.clusters[0]?.cluster
  if (cluster === undefined) throw new Error(`${source} has no cluster`)
  const server = new URL(cluster.server)
  const fromB64 = (text: string | undefined) => (text === undefined ? undefined : Buffer.from(text, 'base64').toString('utf8'))
  let tlsOptions: TcpProxyOptions['tls']
  if (options.terminateTls === true) {
    const caPem = fromB64(cluster['certificate-authority-data'])
    if (caPem === undefined) throw new Error(`${source} has no certificate-authority-data`)
    const user = config.users[0]?.user ?? {}
    const ca = await createCertificateAuthority('ironpool-test-proxy-ca')
    const serving = await ca.issue({commonName: 'ironpool-test-proxy', usage: 'server', ipAddresses: ['127.0.0.1']})
    tlsOptions = {server: serving, upstream: {caPem, certPem: fromB64(user['client-certificate-data']), keyPem: fromB64(user['client-key-data'])}}
    cluster['certificate-authority-data'] = Buffer.from(ca.certPem).toString('base64')
  }
  if (options.lossy !== undefined && tlsOptions === undefined) throw new Error('a lossy link needs terminateTls')
  const proxy = new TcpProxy({target: {host: server.hostname, port: Number(server.port)}, tls: tlsOptions, lossy: options.lossy})
  const port = await proxy.start()
  cluster.server = `https://127.0.0.1:${port}`
  await writeFile(target, stringify(config), {mode: 0o600})
  return {proxy, kubeconfig: target}
}
