/** A scripted lister and watcher for the list+watch cache's unit tests: no network, time on a FakeClock. */
import {OversizedPageError, type ListPage, type Lister, type OversizedObject, type Watcher} from '../../../../src/kube/watch/list-watch-source.ts'
import type {WatchCallbacks} from '../../../../src/kube/watch/watch-request.ts'
import type {KubeObject} from '../../../../src/kube/watch/list-watch-store.ts'

export interface Obj extends KubeObject {
  metadata: {name: string; namespace?: string; resourceVersion: string}
  spec?: {value?: unknown}
}

export function obj(name: string, resourceVersion: string, value?: unknown): Obj {
  return {metadata: {name, resourceVersion}, spec: {value}}
}

/** The server's state: objects and a resourceVersion, listed in one page unless pageSize says otherwise. */
export class FakeLister {
  readonly objects = new Map<string, Obj>()
  resourceVersion = '100'
  calls = 0
  /** Errors thrown by the next calls, in order. */
  readonly failures: Error[] = []
  /** The next call never answers (a list that hangs). */
  hangNext = false
  /** The limit of each call, in order. */
  readonly limits: number[] = []
  /**
   * As the answer cap: a page whose objects' JSON is longer than this fails as kube-apiserver's answer
   * would; a page of one such object says how to go on without it (skip) unless skipUnknown.
   */
  maxPageBytes = Infinity
  skipUnknown = false
  /** Objects reported taken out of each page for their size, as list-request.ts does. */
  oversized: OversizedObject[] = []

  constructor(...objects: Obj[]) {
    for (const o of objects) this.objects.set(o.metadata.name, o)
  }

  set(...objects: Obj[]): void {
    this.objects.clear()
    for (const o of objects) this.objects.set(o.metadata.name, o)
  }

  readonly list: Lister<Obj> = ({limit, continue: token}) => {
    this.calls++
    if (this.hangNext) {
      this.hangNext = false
      return new Promise<ListPage<Obj>>(() => {})
    }
    const failure = this.failures.shift()
    if (failure) return Promise.reject(failure)
    const all = [...this.objects.values()]
    const start = token === undefined ? 0 : Number(token)
    this.limits.push(limit)
    const items = all.slice(start, start + limit)
    const next = start + limit < all.length ? String(start + limit) : undefined
    const bytes = JSON.stringify(items).length
    if (bytes > this.maxPageBytes) {
      const only = items[0]!.metadata
      const skip = limit === 1 && !this.skipUnknown ? {continue: next, resourceVersion: this.resourceVersion, object: {name: only.name, resourceVersion: only.resourceVersion, bytes, limitBytes: this.maxPageBytes}} : undefined
      return Promise.reject(new OversizedPageError(limit, bytes, this.maxPageBytes, skip))
    }
    const page: ListPage<Obj> = {items, metadata: {resourceVersion: this.resourceVersion, ...(next ? {continue: next} : {})}, ...(this.oversized.length > 0 ? {oversized: this.oversized} : {})}
    return Promise.resolve(page)
  }
}

export interface OpenedWatch {
  resourceVersion: string
  callbacks: WatchCallbacks
  aborted: boolean
}

export class FakeWatcher {
  readonly opened: OpenedWatch[] = []
  /** done() errors for the next opens, in order: the open fails the way client-node's does. */
  readonly failures: unknown[] = []
  /** The next open gets no answer until answerHung() (a reopened watch the server never answers). */
  hangNext = false
  private hung: (() => void) | undefined

  readonly watch: Watcher = (resourceVersion, callbacks) => {
    const opened: OpenedWatch = {resourceVersion, callbacks, aborted: false}
    this.opened.push(opened)
    const failure = this.failures.shift()
    if (failure !== undefined) callbacks.done(failure)
    const handle = {abort: () => (opened.aborted = true)}
    if (this.hangNext) {
      this.hangNext = false
      return new Promise((resolve) => (this.hung = () => resolve(handle)))
    }
    return Promise.resolve(handle)
  }

  /** The hung open is answered at last. */
  answerHung(): void {
    this.hung?.()
    this.hung = undefined
  }

  get current(): OpenedWatch {
    const last = this.opened.at(-1)
    if (last === undefined) throw new Error('no watch opened')
    return last
  }

  /** Watches opened and not aborted: never more than one. */
  get live(): OpenedWatch[] {
    return this.opened.filter((w) => !w.aborted)
  }

  send(type: string, object: unknown): void {
    this.current.callbacks.event(type, object)
  }
}
