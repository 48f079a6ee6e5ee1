/**
 * One small HTTP server for what operators scrape and kubelet probes: /metrics from a Registry,
 * /healthz and /readyz from named checks (healthz.ts). A command runs one for metrics and one for
 * probes when their addresses differ (the controller's :8080 and :8081), or one serving both; it is a
 * runnable, so the manager starts it first and closes it last.
 */
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import {createServer as createTlsServer} from 'node:https'
import type {AddressInfo} from 'node:net'
import type {Registry} from 'prom-client'
import {errorMessage, type Logger} from '../core/index.ts'
import type {Runnable} from '../runtime/runnable.ts'
import {formatBindAddress, type BindAddress} from './bind-address.ts'
import {answerHealth, type HealthChecks} from './healthz.ts'

/**
 * /metrics over TLS with every scrape authorized (the controller's `--metrics-secure`): the serving
 * certificate and key, and the verdict on a request's Authorization header (src/kube/identity/
 * metrics-authorizer.ts: TokenReview, then SubjectAccessReview). Health probes are never behind it:
 * the kubelet probes them plain.
 */
export interface SecureMetrics {
  tls: {certPem: string; keyPem: string}
  authorize(authorization: string | undefined, path: string): Promise<{status: 200} | {status: 401 | 403 | 500; reason: string}>
}

export interface ObserveServerOptions {
  /** For logs and the manager. Default: named after what it serves ("metrics", "health-probes"). */
  name?: string
  address: BindAddress
  /** Serves /metrics when set. */
  metrics?: Registry
  /** Serve /healthz and /readyz when set; an empty map answers "ok". */
  healthz?: HealthChecks
  readyz?: HealthChecks
  /** Serve over TLS and authorize /metrics (only for a server without probes). */
  secure?: SecureMetrics
  logger?: Logger
}

export class ObserveServer implements Runnable {
  readonly name: string
  readonly group = 'servers'
  private readonly options: ObserveServerOptions
  private readonly bound = Promise.withResolvers<AddressInfo>()
  private boundAddress: AddressInfo | undefined

  constructor(options: ObserveServerOptions) {
    this.options = options
    const probes = options.healthz !== undefined || options.readyz !== undefined
    this.name = options.name ?? (options.metrics === undefined ? 'health-probes' : probes ? 'metrics-and-probes' : 'metrics')
    // Nobody may be waiting when listening fails; start() reports that failure itself.
    this.bound.promise.catch(() => {})
  }

  /** The address actually bound (the real port for port 0); undefined until listening. */
  address(): AddressInfo | undefined {
    return this.boundAddress
  }

  /** Resolves once listening, so probes and scrapes can find it before anything else starts. */
  async waitReady(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted()
    const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), {once: true}))
    aborted.catch(() => {})
    await Promise.race([this.bound.promise, aborted])
  }

  /** Listens until signal aborts, then closes, cutting idle keep-alive connections so stop is quick. */
  async start(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return
    const {secure} = this.options
    const handler = (req: IncomingMessage, res: ServerResponse) => void this.handle(req, res)
    const server = secure === undefined ? createServer(handler) : createTlsServer({cert: secure.tls.certPem, key: secure.tls.keyPem, minVersion: 'TLSv1.2'}, handler)
    try {
      await listen(server, this.options.address)
    } catch (error) {
      const failure = new Error(`${this.name}: cannot listen on ${formatBindAddress(this.options.address)}: ${errorMessage(error)}`, {cause: error})
      this.bound.reject(failure)
      throw failure
    }
    this.boundAddress = server.address() as AddressInfo
    this.bound.resolve(this.boundAddress)
    const shown = formatBindAddress({host: this.boundAddress.address, port: this.boundAddress.port})
    this.options.logger?.info({server: this.name, address: shown, paths: this.paths(), ...(secure !== undefined && {scheme: 'https', authorization: 'TokenReview + SubjectAccessReview'})}, `serving ${this.name}`)

    const closed = new Promise<void>((resolve) => server.once('close', () => resolve()))
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve()
      else signal.addEventListener('abort', () => resolve(), {once: true})
    })
    server.close()
    server.closeAllConnections()
    await closed
  }

  private paths(): string[] {
    const {metrics, healthz, readyz} = this.options
    return [metrics && '/metrics', healthz && '/healthz', readyz && '/readyz'].filter((p): p is string => typeof p === 'string')
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const {status, body, contentType} = await this.route(req)
      res.writeHead(status, {'Content-Type': contentType, 'X-Content-Type-Options': 'nosniff'})
      res.end(req.method === 'HEAD' ? undefined : body)
    } catch (error) {
      this.options.logger?.error({server: this.name, path: req.url, err: errorMessage(error)}, 'request failed')
      if (!res.headersSent) res.writeHead(500, {'Content-Type': TEXT})
      res.end('internal server error\n')
    }
  }

  private async route(req: IncomingMessage): Promise<{status: number; body: string; contentType: string}> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return {status: 405, body: 'method not allowed\n', contentType: TEXT}
    const url = new URL(req.url ?? '/', 'http://localhost')
    const [, endpoint = '', ...rest] = url.pathname.split('/')
    const subpath = rest.join('/')
    const {metrics, logger} = this.options
    if (endpoint === 'metrics' && subpath === '' && metrics !== undefined) {
      if (this.options.secure !== undefined) {
        const verdict = await this.options.secure.authorize(req.headers.authorization, url.pathname)
        if (verdict.status !== 200) {
          logger?.debug({server: this.name, path: url.pathname, status: verdict.status, reason: verdict.reason}, 'scrape refused')
          return {status: verdict.status, body: `${verdict.status === 401 ? 'Unauthorized' : verdict.status === 403 ? 'Forbidden' : 'Internal Server Error'}: ${verdict.reason}\n`, contentType: TEXT}
        }
      }
      return {status: 200, body: await metrics.metrics(), contentType: metrics.contentType}
    }
    const checks = endpoint === 'healthz' ? this.options.healthz : endpoint === 'readyz' ? this.options.readyz : undefined
    if (checks !== undefined) return {...(await answerHealth(endpoint, checks, subpath, url.searchParams, logger)), contentType: TEXT}
    return {status: 404, body: 'not found\n', contentType: TEXT}
  }
}

const TEXT = 'text/plain; charset=utf-8'

function listen(server: Server, address: BindAddress): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen({port: address.port, host: address.host}, () => {
      server.off('error', reject)
      resolve()
    })
  })
}

export interface ObserveServersOptions {
  metricsAddress: BindAddress | undefined
  probeAddress: BindAddress | undefined
  metrics: Registry
  healthz: HealthChecks
  readyz: HealthChecks
  /** /metrics over TLS, authorized; the probes then always have a server of their own (plain). */
  secureMetrics?: SecureMetrics
  logger?: Logger
}

/**
 * The servers a command runs: none, one, or two. One server serves both when the addresses are the
 * same (two sockets cannot share a port), and an address of "0" leaves its side out.
 */
export function observeServers(options: ObserveServersOptions): ObserveServer[] {
  const {metricsAddress, probeAddress, metrics, healthz, readyz, logger, secureMetrics: secure} = options
  const same = secure === undefined && metricsAddress !== undefined && probeAddress !== undefined && formatBindAddress(metricsAddress) === formatBindAddress(probeAddress) && metricsAddress.port !== 0
  if (same) return [new ObserveServer({name: 'metrics-and-probes', address: metricsAddress, metrics, healthz, readyz, logger})]
  const servers: ObserveServer[] = []
  if (metricsAddress !== undefined) servers.push(new ObserveServer({name: 'metrics', address: metricsAddress, metrics, logger, ...(secure !== undefined && {secure})}))
  if (probeAddress !== undefined) servers.push(new ObserveServer({name: 'health-probes', address: probeAddress, healthz, readyz, logger}))
  return servers
}
