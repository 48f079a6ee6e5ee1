/**
 * Loads the kubeconfig the way kubectl resolves it: --kubeconfig, else $KUBECONFIG, else ~/.kube/config,
 * else the in-cluster service account; --context picks a context.
 */
import {KubeConfig} from './client-node.ts'
import {createHash} from 'node:crypto'
import {existsSync} from 'node:fs'
import type {AgentOptions} from 'node:https'
import type {ConnectionOptions} from 'node:tls'
import {NodeDispatcher} from './node-dispatcher.ts'

export interface KubeconfigOptions {
  kubeconfig?: string
  context?: string
}

export function loadKubeConfig(options: KubeconfigOptions = {}): KubeConfig {
  const kc = new KubeConfig()
  if (options.kubeconfig) {
    if (!existsSync(options.kubeconfig)) throw new Error(`kubeconfig ${options.kubeconfig} does not exist`)
    kc.loadFromFile(options.kubeconfig)
  } else {
    kc.loadFromDefault()
  }
  if (kc.getCurrentCluster() === null) {
    throw new Error('no Kubernetes cluster configured: pass --kubeconfig, set KUBECONFIG, or run in a cluster')
  }
  if (options.context) {
    if (!kc.getContextObject(options.context)) throw new Error(`context ${options.context} not found in kubeconfig`)
    kc.setCurrentContext(options.context)
  }
  reuseConnections(kc)
  return kc
}

type Cluster = {server?: string; proxyUrl?: string} | null
type CreateDispatcher = (cluster: Cluster, agentOptions: AgentOptions) => unknown
type DispatcherOptions = {type: 'agent'; connect: ConnectionOptions} | {type: 'none'} | {type: 'proxy' | 'socks'}

/**
 * client-node 2.0.1 builds a new undici Agent for every request (KubeConfig.createDispatcher, private),
 * so every call pays a TLS handshake and leaves a connection pool behind: a poollet's one Lease write
 * per tick cost 10–15 ms of CPU that way. This keeps one dispatcher per TLS identity (server, CA,
 * client certificate and key, verification settings), whose keep-alive connections every request and
 * watch of this KubeConfig share; it is a NodeDispatcher (node-dispatcher.ts says why), with the TLS
 * options client-node would give undici (createDispatcherOptions), except through a proxy, where
 * client-node's own undici dispatcher is kept. Undo the caching when client-node caches its dispatchers.
 */
export function reuseConnections(kc: KubeConfig): void {
  const target = kc as unknown as {createDispatcher: CreateDispatcher; createDispatcherOptions: (cluster: Cluster, agentOptions: AgentOptions) => DispatcherOptions}
  const clientNodeDispatcher = target.createDispatcher.bind(kc)
  const create: CreateDispatcher = (cluster, agentOptions) => {
    // Also where client-node refuses a plain-HTTP server without insecure-skip-tls-verify.
    const options = target.createDispatcherOptions.call(kc, cluster, agentOptions)
    if (options.type === 'agent') return new NodeDispatcher(cluster?.server ?? '', options.connect)
    if (options.type === 'none') return new NodeDispatcher(cluster?.server ?? '')
    return clientNodeDispatcher(cluster, agentOptions)
  }
  const cache = new Map<string, unknown>()
  dispatchers.set(kc, cache)
  // The identity of the last request and its key: client-node builds these options afresh for every
  // request (new Buffers of the same bytes), and hashing them each time was a third of the cost of a
  // request's authentication (a poollet's heartbeat pays it every tick). Comparing bytes is cheap.
  let last: {parts: IdentityParts; key: string} | undefined
  target.createDispatcher = (cluster, agentOptions) => {
    const parts = identityParts(cluster, agentOptions)
    let key = last !== undefined && sameParts(last.parts, parts) && cache.has(last.key) ? last.key : undefined
    if (key === undefined) {
      const hash = createHash('sha256')
      for (const part of parts) {
        hash.update(part === undefined ? '\u0000' : typeof part === 'string' || Buffer.isBuffer(part) ? part : JSON.stringify(part))
        hash.update('\u0001')
      }
      key = hash.digest('hex')
      last = {parts, key}
    }
    if (!cache.has(key)) {
      // A new identity for a server (a rotated client certificate): the old one's pool is closed
      // gracefully, so each rotation leaves none behind; its requests and watches in flight finish first.
      const server = cluster?.server ?? ''
      for (const [oldKey, old] of servers.get(kc)?.get(server) ?? []) {
        cache.delete(oldKey)
        void (old as {close?: () => Promise<void>}).close?.().catch(() => {})
      }
      const dispatcher = create(cluster, agentOptions)
      cache.set(key, dispatcher)
      if (!servers.has(kc)) servers.set(kc, new Map())
      servers.get(kc)?.set(server, new Map([[key, dispatcher]]))
    }
    return cache.get(key)
  }
}

/** What tells one TLS identity of a server from another: server, CA, client certificate and key, verification. */
type IdentityParts = unknown[]

function identityParts(cluster: Cluster, agentOptions: AgentOptions): IdentityParts {
  return [cluster?.server, agentOptions.ca, agentOptions.cert, agentOptions.key, agentOptions.pfx, agentOptions.passphrase, agentOptions.servername, String(agentOptions.rejectUnauthorized)]
}

function sameParts(a: IdentityParts, b: IdentityParts): boolean {
  return a.length === b.length && a.every((part, i) => samePart(part, b[i]))
}

function samePart(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b)
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) return JSON.stringify(a) === JSON.stringify(b)
  return false
}

/** Per KubeConfig and server, the dispatcher of the identity in use. */
const servers = new WeakMap<KubeConfig, Map<string, Map<string, unknown>>>()

/** Each KubeConfig's shared dispatchers, for dropConnections(). */
const dispatchers = new WeakMap<KubeConfig, Map<string, unknown>>()

/**
 * Closes every pooled connection of this KubeConfig, so that the next request dials afresh: the
 * kubelet's onRepeatedHeartbeatFailure, for a connection that went half-open (no reset, no answer,
 * e.g. after a NAT or load balancer dropped it). Requests and watches in flight on them fail and are
 * retried by their owners. Returns how many connection pools were closed.
 */
export function dropConnections(kc: KubeConfig): number {
  const cache = dispatchers.get(kc)
  if (cache === undefined) return 0
  const pools = [...cache.values()]
  cache.clear()
  servers.delete(kc)
  for (const pool of pools) void (pool as {destroy?: () => Promise<void>}).destroy?.().catch(() => {})
  return pools.length
}

/** The identity a kubeconfig authenticates as, for logs: the user entry's name. */
export function kubeconfigUser(kc: KubeConfig): string {
  return kc.getCurrentUser()?.name ?? 'unknown'
}
