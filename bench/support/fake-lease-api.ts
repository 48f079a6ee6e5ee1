/**
 * A loopback HTTP server that answers the few requests `ironpool controller --kinds=machine` makes
 * (discovery, the list and watch of machine pools and of their Leases), so that a bench can push a
 * generated watch stream of Lease events at a rate no real API server on this machine reaches. Pools
 * are Ready=True and never change; the Lease watch carries MODIFIED events, round-robin over the
 * Leases, each with a new resourceVersion and renewTime, shaped as kube-apiserver serves them
 * (managedFields included). Anything else is a 404 Status; a write is answered with its own body.
 */
import {once} from 'node:events'
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {formatMicroTime} from '../../src/core/conditions.ts'
import type {PoolKind} from '../../src/core/pool-kinds.ts'

const CREATED = '2026-12-01T09:00:00Z'

/** One Lease watch event line with two holes: the resourceVersion and the renewTime. */
interface EventTemplate {
  head: string
  middle: string
  tail: string
}

function leaseTemplate(kind: PoolKind, name: string, index: number): EventTemplate {
  const RV = '@@rv@@'
  const RENEW = '@@renew@@'
  const object = {
    kind: 'Lease',
    apiVersion: 'coordination.k8s.io/v1',
    metadata: {
      name,
      namespace: kind.leaseNamespace,
      uid: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
      resourceVersion: RV,
      creationTimestamp: CREATED,
      managedFields: [
        {
          manager: 'ironpool',
          operation: 'Update',
          apiVersion: 'coordination.k8s.io/v1',
          time: CREATED,
          fieldsType: 'FieldsV1',
          fieldsV1: {'f:spec': {'f:acquireTime': {}, 'f:holderIdentity': {}, 'f:leaseDurationSeconds': {}, 'f:leaseTransitions': {}, 'f:renewTime': {}}},
        },
      ],
    },
    spec: {holderIdentity: `${name}_3f0c1b2a-9d4e-4c6b-8a7f-5e2d1c0b9a8f`, leaseDurationSeconds: 40, acquireTime: '2026-12-01T09:00:00.000000Z', renewTime: RENEW, leaseTransitions: 0},
  }
  const line = `${JSON.stringify({type: 'MODIFIED', object})}\n`
  const [head, rest] = line.split(RV) as [string, string]
  const [middle, tail] = rest.split(RENEW) as [string, string]
  return {head, middle, tail}
}

function pool(kind: PoolKind, name: string, rv: string) {
  const ready = {type: 'Ready', status: 'True', reason: 'HeartbeatReceived', message: kind.readyMessage, observedGeneration: 1, lastUpdateTime: CREATED, lastTransitionTime: CREATED}
  return {apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, metadata: {name, uid: `pool-${name}`, resourceVersion: rv, generation: 1, creationTimestamp: CREATED}, spec: {}, status: {conditions: [ready]}}
}

/** How long the reader may leave the stream's buffer full before the bench gives up on it. */
const DRAIN_TIMEOUT_MS = 30_000
/** kube-apiserver's bookmark period. */
const BOOKMARK_EVERY_MS = 60_000

/**
 * Resolves when the reader has taken the buffered bytes; rejects if it closed the stream or took
 * nothing for DRAIN_TIMEOUT_MS. Polled (the socket's queue, every 5 ms) rather than by 'drain': at
 * 10k events/s on a busy machine a 'drain' went missing and the stream stalled on a reader that was
 * reading (the same with the controller before and after issue 27).
 */
async function drained(res: ServerResponse): Promise<void> {
  const socket = res.socket
  let queued = socket?.writableLength ?? 0
  let progressAt = performance.now()
  for (;;) {
    if (res.destroyed || socket === null || socket.destroyed) throw new Error('the controller closed its Lease watch during the stream')
    const now = socket.writableLength
    if (!res.writableNeedDrain || now === 0) return
    if (now < queued) progressAt = performance.now()
    queued = now
    if (performance.now() - progressAt > DRAIN_TIMEOUT_MS) throw new Error(`the controller read nothing of its Lease watch for ${DRAIN_TIMEOUT_MS / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

export class FakeLeaseApi {
  private readonly server: Server
  private readonly kind: PoolKind
  private readonly names: readonly string[]
  private readonly templates: EventTemplate[]
  private leaseWatch: ServerResponse | undefined
  private readonly held = new Set<ServerResponse>()
  private rv = 1000
  private next = 0
  /** Bytes written on the Lease watch so far. */
  bytes = 0
  /** Leases (by index) no longer renewed: the stream passes over them. */
  private readonly stopped = new Set<number>()
  /** performance.now() of each Lease's last event sent. */
  readonly lastSent: Float64Array
  /**
   * Each Lease's renewTime as last served (by a list or an event): a list serves it, not the time of
   * the list, or the controller's confirming list (a mass death is confirmed by one list of every
   * Lease) would find every stopped Lease renewed, relist, and never mark one.
   */
  private readonly renewOf: (string | undefined)[]
  /** Status writes by pool name, with performance.now() of each. */
  readonly statusWrites: {name: string; at: number}[] = []

  private constructor(kind: PoolKind, names: readonly string[]) {
    this.kind = kind
    this.names = names
    this.templates = names.map((name, i) => leaseTemplate(kind, name, i))
    this.lastSent = new Float64Array(names.length)
    this.renewOf = new Array<string | undefined>(names.length).fill(undefined)
    this.server = createServer((req, res) => this.handle(req, res))
  }

  static async start(kind: PoolKind, names: readonly string[]): Promise<FakeLeaseApi> {
    const api = new FakeLeaseApi(kind, names)
    api.server.listen(0, '127.0.0.1')
    await once(api.server, 'listening')
    return api
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  /** A kubeconfig for this server (plain HTTP on loopback, which client-node allows only with skip-verify). */
  kubeconfig(): string {
    return JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{name: 'fake', cluster: {server: this.url, 'insecure-skip-tls-verify': true}}],
      users: [{name: 'bench', user: {token: 'bench'}}],
      contexts: [{name: 'fake', context: {cluster: 'fake', user: 'bench'}}],
      'current-context': 'fake',
    })
  }

  get watching(): boolean {
    return this.leaseWatch !== undefined
  }

  /** The next `count` event lines, without sending them (the JSON.parse baseline parses these). */
  sampleLines(count: number): string[] {
    const renew = formatMicroTime(new Date())
    return Array.from({length: count}, (_, i) => {
      const t = this.templates[i % this.templates.length]!
      return t.head + String(this.rv + i + 1) + t.middle + renew + t.tail
    })
  }

  /**
   * Sends `count` Lease events at `ratePerSecond` (in batches every few milliseconds, each event its
   * own HTTP chunk, as kube-apiserver flushes each event), waiting for the socket when the reader falls
   * behind. Resolves when the last one is written.
   */
  async stream(count: number, ratePerSecond: number): Promise<void> {
    const res = this.leaseWatch
    if (res === undefined) throw new Error('the controller has no Lease watch open')
    const started = performance.now()
    let sent = 0
    while (sent < count) {
      const due = Math.min(count, Math.floor(((performance.now() - started) / 1000) * ratePerSecond))
      if (due > sent) {
        const renew = formatMicroTime(new Date())
        res.cork()
        for (; sent < due; sent++) res.write(this.line(renew))
        res.uncork()
        // Asked after uncork: what the kernel took at once needs no drain.
        if (res.writableNeedDrain) await drained(res)
      }
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
  }

  /** Stops renewing these Leases (by index into names): their pools go silent. */
  stop(indices: Iterable<number>): void {
    for (const i of indices) this.stopped.add(i)
    if (this.stopped.size >= this.templates.length) throw new Error('every Lease stopped: the stream would have nothing to send')
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy()
    this.server.closeAllConnections()
    this.server.close()
    await once(this.server, 'close').catch(() => {})
  }

  private line(renew: string): string {
    while (this.stopped.has(this.next)) this.next = (this.next + 1) % this.templates.length
    const t = this.templates[this.next]!
    this.lastSent[this.next] = performance.now()
    this.renewOf[this.next] = renew
    this.next = (this.next + 1) % this.templates.length
    const line = t.head + String(++this.rv) + t.middle + renew + t.tail
    this.bytes += Buffer.byteLength(line)
    return line
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const {group, version, plural, leaseNamespace} = this.kind
    const json = (status: number, body: unknown) => {
      res.writeHead(status, {'content-type': 'application/json'})
      res.end(JSON.stringify(body))
    }
    if (req.method !== 'GET') {
      const status = url.pathname.match(new RegExp(`^/apis/${group}/${version}/${plural}/([^/]+)/status$`))
      const poolName = status ? decodeURIComponent(status[1]!) : undefined
      if (poolName !== undefined) this.statusWrites.push({name: poolName, at: performance.now()})
      // Events or status writes (none in a healthy run): echo the body back; a status write as the
      // pool it makes, so that the controller sees its write held.
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString() || '{}'
        res.writeHead(req.method === 'POST' ? 201 : 200, {'content-type': 'application/json'})
        if (poolName === undefined) return res.end(body)
        const written = pool(this.kind, poolName, String(++this.rv))
        res.end(JSON.stringify({...written, status: (JSON.parse(body) as {status?: unknown}).status ?? written.status}))
      })
      return
    }
    const watch = url.searchParams.get('watch') === 'true'
    const rv = String(this.rv)
    if (url.pathname === `/apis/${group}/${version}`) {
      return json(200, {kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources: [{name: plural, singularName: '', namespaced: false, kind: this.kind.kind, verbs: ['get', 'list', 'watch']}, {name: `${plural}/status`, singularName: '', namespaced: false, kind: this.kind.kind, verbs: ['get', 'patch', 'update']}]})
    }
    if (url.pathname === `/apis/${group}/${version}/${plural}`) {
      if (watch) return this.hold(res, url, {apiVersion: `${group}/${version}`, kind: this.kind.kind})
      // Paginated as a real server does: 100k pools in one answer would be past any client's cap.
      const limit = Number(url.searchParams.get('limit') ?? 0)
      const from = Number(url.searchParams.get('continue') ?? 0)
      const to = limit > 0 ? Math.min(from + limit, this.names.length) : this.names.length
      const more = to < this.names.length ? {continue: String(to)} : {}
      return json(200, {apiVersion: `${group}/${version}`, kind: `${this.kind.kind}List`, metadata: {resourceVersion: rv, ...more}, items: this.names.slice(from, to).map((name) => pool(this.kind, name, rv))})
    }
    if (url.pathname === `/apis/coordination.k8s.io/v1/namespaces/${leaseNamespace}/leases`) {
      if (watch) {
        this.hold(res, url, {apiVersion: 'coordination.k8s.io/v1', kind: 'Lease'})
        this.leaseWatch = res
        res.once('close', () => {
          if (this.leaseWatch === res) this.leaseWatch = undefined
        })
        return
      }
      // Pages as a real server serves them: the controller's API probe asks for limit=1 every few
      // seconds, and a fake that answered with all 10k Leases would make the bench measure that instead.
      const renew = formatMicroTime(new Date())
      const limit = Number(url.searchParams.get('limit') ?? 0)
      const from = Number(url.searchParams.get('continue') ?? 0)
      const to = limit > 0 ? Math.min(from + limit, this.templates.length) : this.templates.length
      const items = this.templates.slice(from, to).map((t, i) => (JSON.parse(t.head + rv + t.middle + (this.renewOf[from + i] ??= renew) + t.tail) as {object: unknown}).object)
      const more = to < this.templates.length ? {continue: String(to)} : {}
      return json(200, {apiVersion: 'coordination.k8s.io/v1', kind: 'LeaseList', metadata: {resourceVersion: rv, ...more}, items})
    }
    json(404, {kind: 'Status', apiVersion: 'v1', status: 'Failure', message: `${url.pathname} not found`, reason: 'NotFound', code: 404, details: {}, metadata: {}})
  }

  /**
   * Holds a watch stream open. Asked for bookmarks, it sends one a minute, as kube-apiserver does: a
   * quiet watch (the pools', which see no event here) would otherwise trip the controller's two-minute
   * watchdog, a restart and a short blind spell a real server never causes.
   */
  private hold(res: ServerResponse, url: URL, type: {apiVersion: string; kind: string}): void {
    res.writeHead(200, {'content-type': 'application/json', 'transfer-encoding': 'chunked'})
    res.flushHeaders()
    this.held.add(res)
    const bookmarks = url.searchParams.get('allowWatchBookmarks') === 'true' ? setInterval(() => res.write(`${JSON.stringify({type: 'BOOKMARK', object: {...type, metadata: {resourceVersion: String(this.rv)}}})}\n`), BOOKMARK_EVERY_MS) : undefined
    res.once('close', () => {
      clearInterval(bookmarks)
      this.held.delete(res)
    })
  }
}
