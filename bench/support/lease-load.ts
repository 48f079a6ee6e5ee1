/**
 * The load generator: renews N Leases, each every intervalMs, spread evenly over the interval (pool i
 * at phase i/N), as N poollets started at random times would. Renewals are JSON merge patches of
 * spec.renewTime as admin over keep-alive connections, at most `concurrency` in flight; a renewal that cannot start on time waits
 * and its lateness is recorded, so the report shows whether the generator kept up.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {formatMicroTime} from '../../src/core/conditions.ts'
import {KeepAliveApi} from './keepalive-api.ts'

/** How often the scheduler looks for due renewals: fine enough for a 2s interval. */
const SCHEDULER_TICK_MS = 20

export interface LeaseLoadOptions {
  kubeConfig: KubeConfig
  namespace: string
  names: readonly string[]
  intervalMs: number
  concurrency: number
  /** Keep each answered renewal's round trip in latenciesMs (a bench that reports latency; off by default). */
  recordLatency?: boolean
}

export class LeaseLoad {
  /** Per Lease, Date.now() when its last renewal's response arrived. */
  readonly lastAck = new Map<string, number>()
  renewals = 0
  failures = 0
  /** The worst delay between a renewal falling due and its request starting. */
  maxLagMs = 0
  /** The longest time between two answered renewals of one Lease (stopped ones excluded), since start: must stay below the grace period. */
  maxGapMs = 0
  /** Round trips of answered renewals, ms, since start or the last resetLag(), when recordLatency is set. */
  readonly latenciesMs: number[] = []
  private readonly api: KeepAliveApi
  private readonly options: LeaseLoadOptions
  private readonly nextAt: number[]
  private readonly stopped = new Set<string>()
  private inFlight = 0
  /** Where the next scan starts: when concurrency runs out mid-scan, the pools after it go first next time. */
  private cursor = 0
  private readonly pending = new Set<Promise<void>>()
  private timer: NodeJS.Timeout | undefined

  constructor(options: LeaseLoadOptions) {
    this.options = options
    this.api = new KeepAliveApi(options.kubeConfig, options.concurrency)
    const now = Date.now()
    this.nextAt = options.names.map((_, i) => now + (i * options.intervalMs) / options.names.length)
    // The Leases were created (renewed) just before: a Lease this generator never gets to shows as a gap.
    for (const name of options.names) this.lastAck.set(name, now)
  }

  start(): void {
    this.timer = setInterval(() => this.schedule(), SCHEDULER_TICK_MS)
  }

  /** Forgets the lag (and the latencies) so far (start-up), so that maxLagMs covers the measured windows only. maxGapMs is kept: a gap before measuring can already cause an Unknown. */
  resetLag(): void {
    this.maxLagMs = 0
    this.latenciesMs.length = 0
  }

  /** Renewals sent and not yet answered. */
  get inFlightNow(): number {
    return this.inFlight
  }

  /** The longest gap so far, counting the one still open on each renewed Lease. */
  worstGap(): number {
    const now = Date.now()
    let worst = this.maxGapMs
    for (const [name, at] of this.lastAck) if (!this.stopped.has(name)) worst = Math.max(worst, now - at)
    return worst
  }

  /** Renewals due now and not yet started: 0 when the generator keeps up. */
  backlog(): number {
    const now = Date.now()
    return this.nextAt.filter((at) => at <= now).length
  }

  /** These Leases are not renewed any more, from now on. */
  stop(names: readonly string[]): void {
    for (const name of names) this.stopped.add(name)
  }

  /** These stopped Leases are renewed again, from their next turn on (their gap while stopped is not counted). */
  resume(names: readonly string[]): void {
    const now = Date.now()
    for (const name of names) {
      if (this.stopped.delete(name)) this.lastAck.set(name, now)
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer)
    while (this.pending.size > 0) await Promise.allSettled([...this.pending])
    this.api.close()
  }

  private schedule(): void {
    const {names, intervalMs, concurrency} = this.options
    const now = Date.now()
    const start = this.cursor
    for (let k = 0; k < names.length && this.inFlight < concurrency; k++) {
      const i = (start + k) % names.length
      this.cursor = i
      const due = this.nextAt[i]!
      if (due > now) continue
      const name = names[i]!
      this.maxLagMs = Math.max(this.maxLagMs, now - due)
      // The next renewal keeps its phase: a late one does not shift the schedule.
      this.nextAt[i] = due + intervalMs * Math.max(1, Math.ceil((now - due + 1) / intervalMs))
      if (this.stopped.has(name)) continue
      const renewal = this.renew(name).finally(() => this.pending.delete(renewal))
      this.pending.add(renewal)
    }
  }

  private async renew(name: string): Promise<void> {
    this.inFlight++
    try {
      const body = {spec: {renewTime: formatMicroTime(new Date())}}
      const path = `/apis/coordination.k8s.io/v1/namespaces/${this.options.namespace}/leases/${name}`
      const sent = performance.now()
      await this.api.request('PATCH', path, body, 'application/merge-patch+json')
      if (this.options.recordLatency === true) this.latenciesMs.push(performance.now() - sent)
      // A renewal answered after the Lease was stopped still counts: the controller saw it.
      const now = Date.now()
      const previous = this.lastAck.get(name)
      if (previous !== undefined && !this.stopped.has(name)) this.maxGapMs = Math.max(this.maxGapMs, now - previous)
      this.lastAck.set(name, now)
      this.renewals++
    } catch {
      this.failures++
    } finally {
      this.inFlight--
    }
  }
}
