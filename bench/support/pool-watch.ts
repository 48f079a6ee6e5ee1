/**
 * The bench's own watch on one kind's pools: when each pool was first seen Ready=Unknown, and how many
 * times pools changed at all (every change after set-up is a controller write, since nothing else
 * writes pools in the controller bench). Reopened from the last resourceVersion if the server ends it.
 */
import {CustomObjectsApi, Watch, type KubeConfig} from '@kubernetes/client-node'
import type {PoolKind} from '../../src/core/pool-kinds.ts'
import type {Pool} from '../../src/core/types.ts'

/** Enough for any bench run; a watch that keeps failing is a broken bench, not something to retry. */
const MAX_REOPENS = 20

export class PoolWatch {
  /** Per pool, Date.now() when the bench first saw it with Ready=Unknown. */
  readonly unknownAt = new Map<string, number>()
  modified = 0
  private readonly kubeConfig: KubeConfig
  private readonly kind: PoolKind
  private resourceVersion = ''
  private abort: AbortController | undefined
  private reopens = 0
  private closed = false

  constructor(kubeConfig: KubeConfig, kind: PoolKind) {
    this.kubeConfig = kubeConfig
    this.kind = kind
  }

  async start(): Promise<void> {
    const {group, version, plural} = this.kind
    const list = (await this.kubeConfig.makeApiClient(CustomObjectsApi).listClusterCustomObject({group, version, plural})) as {
      metadata: {resourceVersion: string}
      items: Pool[]
    }
    for (const pool of list.items) this.observe(pool)
    this.resourceVersion = list.metadata.resourceVersion
    await this.open()
  }

  close(): void {
    this.closed = true
    this.abort?.abort()
  }

  private async open(): Promise<void> {
    const {group, version, plural} = this.kind
    this.abort = await new Watch(this.kubeConfig).watch(
      `/apis/${group}/${version}/${plural}`,
      {resourceVersion: this.resourceVersion, allowWatchBookmarks: true},
      (type: string, object: Pool) => {
        this.resourceVersion = object.metadata.resourceVersion ?? this.resourceVersion
        if (type === 'MODIFIED') this.modified++
        if (type === 'ADDED' || type === 'MODIFIED') this.observe(object)
      },
      (error: unknown) => {
        if (this.closed) return
        if (++this.reopens > MAX_REOPENS) throw new Error(`pool watch ended ${MAX_REOPENS} times; last: ${String(error)}`)
        void this.open()
      },
    )
  }

  private observe(pool: Pool): void {
    const ready = pool.status?.conditions?.find((c) => c.type === 'Ready')
    if (ready?.status === 'Unknown' && !this.unknownAt.has(pool.metadata.name)) this.unknownAt.set(pool.metadata.name, Date.now())
  }
}
