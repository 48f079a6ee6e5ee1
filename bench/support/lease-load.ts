/**
 * The load generator: renews N Leases, each every intervalMs, spread evenly over the interval (pool i
 * at phase i/N), as N poollets started at random times would. Renewals are JSON merge patches of
 * spec.renewTime as admin, at most `concurrency` in flight; a renewal that cannot start on time waits
 * and its lateness is recorded, so the report shows whether the generator kept up.
 */
import {CoordinationV1Api, PatchStrategy, setHeaderOptions, type KubeConfig} from '@kubernetes/client-node'
import {formatMicroTime} from '../../src/core/conditions.ts'

/** How often the scheduler looks for due renewals: fine enough for a 2s interval. */
const SCHEDULER_TICK_MS = 20

export interface LeaseLoadOptions {
  kubeConfig: KubeConfig
  namespace: string
  names: readonly string[]
  intervalMs: number
  concurrency: number
}

export class LeaseLoad {
  /** Per Lease, Date.now() when its last renewal's response arrived. */
  readonly lastAck = new Map<string, number>()
  renewals = 0
  failures = 0
  /** The worst delay between a renewal falling due and its request starting. */
  maxLagMs = 0
  /** The longest time between two answered renewals of one Lease (stopped ones excluded): must stay below the grace period. */
  maxGapMs = 0
  private readonly api: CoordinationV1Api
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
    this.api = options.kubeConfig.makeApiClient(CoordinationV1Api)
    const now = Date.now()
    this.nextAt = options.names.map((_, i) => now + (i * options.intervalMs) / options.names.length)
  }

  start(): void {
    this.timer = setInterval(() => this.schedule(), SCHEDULER_TICK_MS)
  }

  /** Forgets the lag so far (start-up), so that maxLagMs covers the measured windows only. */
  resetLag(): void {
    this.maxLagMs = 0
    this.maxGapMs = 0
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

  async close(): Promise<void> {
    clearInterval(this.timer)
    while (this.pending.size > 0) await Promise.allSettled([...this.pending])
  }

  private schedule(): void {
    const {names, intervalMs, concurrency} = this.options
    const now = Date.now()
    for (let k = 0; k < names.length && this.inFlight < concurrency; k++) {
      const i = (this.cursor + k) % names.length
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
      await this.api.patchNamespacedLease({name, namespace: this.options.namespace, body}, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))
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
