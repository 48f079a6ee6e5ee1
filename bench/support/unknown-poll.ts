/** The fault bench's record of Unknowns, which must survive API outages (a watch would have to be reopened each time). */
import type {KubeConfig} from '@kubernetes/client-node'
import type {PoolKind} from '../../src/core/pool-kinds.ts'
import type {Pool} from '../../src/core/types.ts'
import {apiRequest} from '../../src/kube/http/api-request.ts'

/**
 * Every pool seen Ready=Unknown, by polling the API with bounded lists: nothing here sets a pool back
 * to True, so an Unknown stays and a poll cannot miss it; an outage only delays the poll.
 */
export class UnknownPoll {
  readonly unknownAt = new Map<string, number>()
  private readonly kc: KubeConfig
  private readonly timer: NodeJS.Timeout
  private readonly kind: PoolKind
  private busy = false

  constructor(kc: KubeConfig, kind: PoolKind) {
    this.kind = kind
    this.kc = kc
    this.timer = setInterval(() => void this.poll(), 500)
  }

  close(): void {
    clearInterval(this.timer)
  }

  private async poll(): Promise<void> {
    if (this.busy) return
    this.busy = true
    try {
      const {group, version, plural} = this.kind
      const list = await apiRequest<{items: Pool[]}>(this.kc, {method: 'GET', path: `/apis/${group}/${version}/${plural}`, timeoutMs: 3_000})
      for (const pool of list.items) {
        const ready = pool.status?.conditions?.find((c) => c.type === 'Ready')
        if (ready?.status === 'Unknown' && !this.unknownAt.has(pool.metadata.name)) this.unknownAt.set(pool.metadata.name, Date.now())
      }
    } catch {
      // The API is down or paused: the next poll sees what changed.
    } finally {
      this.busy = false
    }
  }
}
