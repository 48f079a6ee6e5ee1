/**
 * One controller replica's watch cache of one resource (pools or Leases), as src/kube/watch serves the
 * engine: an initial list, then the API's events in order, each delivered after the network, any stall
 * and the replica's watch lag, on the replica's clock (a paused replica reads them on resume). Its
 * faults: a gap (the stream is cut; reported after the gap tolerance; resumed from its resourceVersion,
 * or relisted when it cannot be), silence (the stream stays open and delivers nothing; it times out at
 * the fault's end and relists), and a relist the engine asks for (a confirming read saw a renewal the
 * watch had not delivered).
 */
import type {Lease, Pool} from '../src/core/types.ts'
import type {BlindReason} from '../src/core/lifecycle/sight/sight.ts'
import type {Fault} from './faults.ts'
import type {Party, SimApi, WatchEvent} from './sim-api.ts'
import type {SimClock} from './sim-clock.ts'

type Resource = 'pools' | 'leases'
type Obj = Pool | Lease

export interface CacheSink {
  state(reason: BlindReason | undefined, detail?: string, relisted?: boolean): void
  upsert(object: Obj): void
  delete(name: string): void
}

const nameOf = (o: Obj) => ('metadata' in o ? o.metadata.name : o.name)
const versionOf = (o: Obj) => ('metadata' in o ? o.metadata.resourceVersion : o.resourceVersion)

export class SimCache {
  readonly objects = new Map<string, Obj>()
  private readonly resource: Resource
  private readonly api: SimApi
  private readonly sim: SimClock
  private readonly party: Party
  private readonly sink: CacheSink
  private readonly gapToleranceMs: number
  private stopped = false
  private synced = false
  /** Stream generation: a relist starts a new stream, which a silence of the old one does not touch. */
  private stream = 0
  private silentStream: number | undefined
  private down = false
  private reportedGap = false
  private readonly buffered: WatchEvent[] = []
  private lastDelivery = 0
  private relisting = false
  /** Events heard while a list is out: those after its revision follow it. */
  private readonly relistLog: WatchEvent[] = []
  private unwatch: () => void = () => {}

  constructor(options: {resource: Resource; api: SimApi; sim: SimClock; party: Party; sink: CacheSink; gapToleranceMs: number; faults: readonly Fault[]; replica: number}) {
    this.resource = options.resource
    this.api = options.api
    this.sim = options.sim
    this.party = options.party
    this.sink = options.sink
    this.gapToleranceMs = options.gapToleranceMs
    for (const f of options.faults) {
      if ((f.class !== 'watch-gap' && f.class !== 'watch-silence') || f.replica !== options.replica || f.resource !== this.resource) continue
      if (f.class === 'watch-gap') {
        this.sim.at(f.start, () => this.cut())
        this.sim.at(f.end, () => this.resume(f.relist))
      } else {
        this.sim.at(f.start, () => {
          if (this.synced) this.silentStream = this.stream
        })
        this.sim.at(f.end, () => {
          if (this.silentStream === this.stream) this.relist('the watch delivered nothing and timed out')
        })
      }
    }
  }

  private syncedListeners: (() => void)[] = []

  /** fn runs once, when the first list has been applied. */
  onceSynced(fn: () => void): void {
    if (this.synced) fn()
    else this.syncedListeners.push(fn)
  }

  get(name: string): Obj | undefined {
    return this.objects.get(name)
  }

  start(lagOf: () => number): void {
    this.lagOf = lagOf
    this.sink.state('not-synced', 'listing')
    this.unwatch = this.api.watch((event) => {
      if (event.resource === this.resource) this.fromApi(event)
    })
    this.relist(undefined)
  }

  stop(): void {
    this.stopped = true
    this.unwatch()
  }

  /** A relist the engine asked for; one at a time. */
  requestRelist(reason: string): void {
    this.relist(reason)
  }

  private lagOf: () => number = () => 0

  private fromApi(event: WatchEvent): void {
    if (this.stopped) return
    if (this.relisting) this.relistLog.push(event)
    if (!this.synced) return
    if (this.silentStream === this.stream) return
    if (this.down) {
      this.buffered.push(event)
      return
    }
    this.deliverLater(event)
  }

  private deliverLater(event: WatchEvent): void {
    const at = Math.max(this.lastDelivery, this.api.sendAt(this.sim.now()) + 1 + this.lagOf())
    this.lastDelivery = at
    const stream = this.stream
    this.sim.at(at, () =>
      this.party.clock.run(() => {
        if (this.stopped || stream !== this.stream) return
        this.apply(event)
      }),
    )
  }

  private apply(event: WatchEvent): void {
    const name = nameOf(event.object)
    if (event.type === 'delete') {
      this.objects.delete(name)
      this.sink.delete(name)
    } else {
      this.objects.set(name, event.object)
      this.sink.upsert(event.object)
    }
  }

  private cut(): void {
    if (!this.synced || this.down) return
    this.down = true
    this.reportedGap = false
    this.party.clock.setTimer(this.gapToleranceMs, () => {
      if (this.down && !this.stopped) {
        this.reportedGap = true
        this.sink.state('watch-gap', 'the watch stream was cut')
      }
    })
  }

  private resume(relist: boolean): void {
    if (!this.down) return
    this.down = false
    if (relist) {
      this.buffered.length = 0
      if (!this.reportedGap) this.sink.state('watch-gap', 'the watch could not resume')
      this.reportedGap = true
      this.relist('the watch could not resume')
      return
    }
    for (const event of this.buffered.splice(0)) this.deliverLater(event)
    if (this.reportedGap) {
      const at = this.lastDelivery
      this.sim.at(at, () => this.party.clock.run(() => this.stopped || this.sink.state(undefined)))
    }
  }

  private relist(reason: string | undefined): void {
    if (this.relisting || this.stopped) return
    this.relisting = true
    const attempt = () => {
      if (this.stopped) return
      this.api.list(this.party).then(
        (list) => {
          this.relisting = false
          if (this.stopped) return
          this.stream++
          this.silentStream = undefined
          this.buffered.length = 0
          this.lastDelivery = this.sim.now()
          const after = this.relistLog.splice(0).filter((e) => e.rv > list.resourceVersion)
          const fresh = (this.resource === 'pools' ? list.pools : list.leases) as Obj[]
          const names = new Set(fresh.map(nameOf))
          for (const [name] of this.objects) if (!names.has(name)) {
            this.objects.delete(name)
            this.sink.delete(name)
          }
          for (const o of fresh) {
            if (versionOf(this.objects.get(nameOf(o)) ?? o) === versionOf(o) && this.objects.has(nameOf(o))) continue
            this.objects.set(nameOf(o), o)
            this.sink.upsert(o)
          }
          const first = !this.synced
          this.synced = true
          if (this.down) this.buffered.push(...after)
          else for (const e of after) this.deliverLater(e)
          if (first) for (const fn of this.syncedListeners.splice(0)) fn()
          if (this.down) return
          // Events committed after the list's resourceVersion arrive on the new stream.
          if (first || this.reportedGap || reason !== undefined) this.sink.state(undefined, reason, !first)
          this.reportedGap = false
        },
        () => {
          if (!this.stopped) this.party.clock.setTimer(1_000, attempt)
        },
      )
    }
    attempt()
  }
}
