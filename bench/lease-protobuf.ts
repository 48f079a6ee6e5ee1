/**
 * JSON or protobuf for the Lease watch (issue 27: "measure whether the protobuf encoding kube-apiserver
 * serves for Leases beats JSON here"). Records one real kube-apiserver's Lease watch twice, as JSON
 * (`Accept: application/json`, one event a line) and as protobuf (`application/vnd.kubernetes.protobuf;
 * stream=watch`: each frame a 4-byte big-endian length, then a metav1.WatchEvent {type = 1, object = 2
 * (RawExtension {raw = 1})}, whose raw is `k8s\0` and a runtime.Unknown {typeMeta = 1, raw = 2} around
 * the Lease: as kube-apiserver 1.36 serves it, the envelope is the object's, not the frame's), while --events
 * renewals are written as a poollet writes them. Then decodes the recorded events in this process, each
 * the way the controller would keep it: JSON.parse + projectLease (what the watch does today) against a
 * protobuf reader that takes only the projection's fields (renewTime formatted as the JSON MicroTime,
 * so the two projections are equal, which is checked). Prints CPU per event and bytes per event.
 * Nothing in production reads protobuf.
 */
import {availableParallelism, loadavg} from 'node:os'
import {ControlPlane} from '../src/controlplane/control-plane.ts'
import {formatMicroTime} from '../src/core/conditions.ts'
import {apiRequest, apiUrl, authenticatedRequest} from '../src/kube/http/api-request.ts'
import {loadKubeConfig} from '../src/kube/http/kubeconfig.ts'
import {projectLease} from '../src/kube/watch/caches/projections.ts'
import {parseArgs, positiveInt} from './support/args.ts'
import {progress} from './support/plane.ts'
import {fmt, printTable} from './support/table.ts'

const flags = parseArgs({
  events: {default: '500', help: 'Lease renewals recorded (each one watch event per encoding)'},
  rounds: {default: '200', help: 'times the recorded events are decoded, for the CPU figure'},
})
const events = positiveInt('events', flags.events)
const rounds = positiveInt('rounds', flags.rounds)
const NAMESPACE = 'default'
const LEASE = 'bench-pool-000001'
const PROTOBUF_WATCH = 'application/vnd.kubernetes.protobuf;stream=watch'
const MAGIC = Buffer.from('k8s\0', 'latin1')

/** A protobuf message's fields read in order; only what is asked for is decoded. */
class Reader {
  pos: number
  readonly end: number
  readonly buf: Buffer
  constructor(buf: Buffer, start = 0, end = buf.length) {
    this.buf = buf
    this.pos = start
    this.end = end
  }
  more(): boolean {
    return this.pos < this.end
  }
  /** Up to 2^53: enough for every varint a Lease has (int32s, int64 seconds). */
  varint(): number {
    let value = 0
    let scale = 1
    for (;;) {
      const byte = this.buf[this.pos++]!
      value += (byte & 0x7f) * scale
      if (byte < 0x80) return value
      scale *= 128
    }
  }
  /** The next length-delimited field's [start, end). */
  span(): [number, number] {
    const length = this.varint()
    const start = this.pos
    this.pos += length
    return [start, this.pos]
  }
  string(): string {
    const [start, end] = this.span()
    return this.buf.toString('utf8', start, end)
  }
  skip(wire: number): void {
    if (wire === 0) this.varint()
    else if (wire === 1) this.pos += 8
    else if (wire === 2) this.span()
    else if (wire === 5) this.pos += 4
    else throw new Error(`protobuf wire type ${wire} not read here`)
  }
}

/** runtime.Unknown after its magic: the [start, end) of raw (field 2). */
function unknownRaw(buf: Buffer, start: number, end: number): [number, number] {
  if (buf.compare(MAGIC, 0, 4, start, start + 4) !== 0) throw new Error(`no k8s\\0 magic at ${start}: ${buf.subarray(start, start + 48).toString('hex')}`)
  const r = new Reader(buf, start + 4, end)
  while (r.more()) {
    const tag = r.varint()
    if (tag >>> 3 === 2 && (tag & 7) === 2) return r.span()
    r.skip(tag & 7)
  }
  throw new Error('runtime.Unknown without raw')
}

/** metav1.MicroTime {seconds = 1, nanos = 2} as the JSON form kube-apiserver writes (six fractional digits). */
function microTime(r: Reader): string {
  const [start, end] = r.span()
  const t = new Reader(r.buf, start, end)
  let seconds = 0
  let nanos = 0
  while (t.more()) {
    const tag = t.varint()
    if (tag === (1 << 3)) seconds = t.varint()
    else if (tag === (2 << 3)) nanos = t.varint()
    else t.skip(tag & 7)
  }
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`
}

/** One protobuf watch frame (without its length) → the event type and the Lease's projected fields. */
function decodeProtobufEvent(frame: Buffer): {type: string; lease: Record<string, unknown>} {
  // The frame is the metav1.WatchEvent itself (no envelope); its object carries one.
  const ev = new Reader(frame)
  let type = ''
  let object: [number, number] | undefined
  while (ev.more()) {
    const tag = ev.varint()
    if (tag === ((1 << 3) | 2)) type = ev.string()
    else if (tag === ((2 << 3) | 2)) {
      // RawExtension {raw = 1}
      const [s, e] = ev.span()
      const ext = new Reader(frame, s, e)
      while (ext.more()) {
        const t = ext.varint()
        if (t === ((1 << 3) | 2)) object = ext.span()
        else ext.skip(t & 7)
      }
    } else ev.skip(tag & 7)
  }
  if (object === undefined) throw new Error('WatchEvent without object')
  const [leaseStart, leaseEnd] = unknownRaw(frame, object[0], object[1])
  const lease: Record<string, unknown> = {}
  const r = new Reader(frame, leaseStart, leaseEnd)
  while (r.more()) {
    const tag = r.varint()
    if (tag === ((1 << 3) | 2)) {
      // ObjectMeta: name = 1, namespace = 3, resourceVersion = 6
      const [s, e] = r.span()
      const m = new Reader(frame, s, e)
      while (m.more()) {
        const t = m.varint()
        if (t === ((1 << 3) | 2)) lease.name = m.string()
        else if (t === ((3 << 3) | 2)) lease.namespace = m.string()
        else if (t === ((6 << 3) | 2)) lease.resourceVersion = m.string()
        else m.skip(t & 7)
      }
    } else if (tag === ((2 << 3) | 2)) {
      // LeaseSpec: holderIdentity = 1, leaseDurationSeconds = 2, acquireTime = 3, renewTime = 4, leaseTransitions = 5
      const [s, e] = r.span()
      const p = new Reader(frame, s, e)
      while (p.more()) {
        const t = p.varint()
        if (t === ((1 << 3) | 2)) lease.holderIdentity = p.string()
        else if (t === (2 << 3)) lease.leaseDurationSeconds = p.varint()
        else if (t === ((4 << 3) | 2)) lease.renewTime = microTime(p)
        else if (t === (5 << 3)) lease.leaseTransitions = p.varint()
        else p.skip(t & 7)
      }
    } else r.skip(tag & 7)
  }
  return {type, lease}
}

/** Reads a watch's body until `count` events (lines or frames) have come; resolves with them. */
async function record(kc: ReturnType<typeof loadKubeConfig>, accept: string, resourceVersion: string, count: number, framed: boolean): Promise<{items: Buffer[]; contentType: string}> {
  const url = apiUrl(kc, `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`, {watch: true, resourceVersion, fieldSelector: `metadata.name=${LEASE}`})
  const {headers, dispatcher} = await authenticatedRequest(kc, url, 'GET', {Accept: accept})
  const controller = new AbortController()
  const response = await dispatcher.request({origin: url.origin, path: url.pathname + url.search, method: 'GET', headers, signal: controller.signal, headersTimeout: 30_000, bodyTimeout: 60_000})
  if (response.statusCode !== 200) throw new Error(`watch (${accept}): HTTP ${response.statusCode}`)
  const contentType = String(response.headers['content-type'])
  const items: Buffer[] = []
  let pending = Buffer.alloc(0)
  return new Promise((resolve, reject) => {
    response.body.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      for (;;) {
        if (framed) {
          if (pending.length < 4) break
          const length = pending.readUInt32BE(0)
          if (pending.length < 4 + length) break
          items.push(Buffer.from(pending.subarray(4, 4 + length)))
          pending = pending.subarray(4 + length)
        } else {
          const newline = pending.indexOf(10)
          if (newline < 0) break
          items.push(Buffer.from(pending.subarray(0, newline)))
          pending = pending.subarray(newline + 1)
        }
      }
      if (items.length >= count) {
        controller.abort()
        resolve({items: items.slice(0, count), contentType})
      }
    })
    response.body.once('error', (error: unknown) => {
      if (items.length < count) reject(error instanceof Error ? error : new Error(String(error)))
    })
  })
}

/** CPU µs per call of decode over every item, `rounds` times, after one warm-up round. */
function cpuMicrosPerItem<T>(items: readonly T[], decode: (item: T) => unknown): number {
  let sink = 0
  for (let w = 0; w < Math.min(20, rounds); w++) for (const item of items) sink += decode(item) === undefined ? 0 : 1
  const start = process.cpuUsage()
  for (let round = 0; round < rounds; round++) for (const item of items) sink += decode(item) === undefined ? 0 : 1
  const used = process.cpuUsage(start)
  if (sink === 0) throw new Error('nothing decoded')
  return (used.user + used.system) / (items.length * rounds)
}

progress('starting kube-apiserver and etcd')
const plane = await ControlPlane.start({progress: (line) => process.stderr.write(`${line}\n`)})
try {
  const kc = loadKubeConfig({kubeconfig: plane.adminKubeconfig})
  const path = `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`
  const holder = `${LEASE}_3f0c1b2a-9d4e-4c6b-8a7f-5e2d1c0b9a8f`
  const now = () => formatMicroTime(new Date())
  const created = await apiRequest<{metadata: {resourceVersion: string}}>(kc, {method: 'POST', path, body: {apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: {name: LEASE}, spec: {holderIdentity: holder, leaseDurationSeconds: 40, acquireTime: now(), renewTime: now(), leaseTransitions: 0}}, timeoutMs: 10_000})
  const from = created.metadata.resourceVersion
  progress(`recording ${events} renewals on a JSON and a protobuf watch`)
  const json = record(kc, 'application/json', from, events, false)
  const protobuf = record(kc, PROTOBUF_WATCH, from, events, true)
  for (let i = 0; i < events; i++) {
    await apiRequest(kc, {method: 'PATCH', path: `${path}/${LEASE}`, body: {spec: {renewTime: now()}}, contentType: 'application/merge-patch+json', timeoutMs: 10_000})
  }
  const [jsonRec, protoRec] = await Promise.all([json, protobuf])
  const lines = jsonRec.items.map((b) => b.toString('utf8'))
  const frames = protoRec.items

  // The two encodings' projections must be the same Lease, event for event.
  const fromJson = (line: string) => {
    const event = JSON.parse(line) as {type: string; object: unknown}
    return {type: event.type, lease: {...projectLease(event.object)}}
  }
  for (let i = 0; i < events; i++) {
    const a = fromJson(lines[i]!)
    const b = decodeProtobufEvent(frames[i]!)
    const same = a.type === b.type && Object.entries(a.lease).every(([k, v]) => b.lease[k] === v)
    if (!same) throw new Error(`event ${i} differs: JSON ${JSON.stringify(a)}, protobuf ${JSON.stringify(b)}`)
  }
  progress(`decoding: ${events} events × ${rounds} rounds each way`)
  const jsonMicros = cpuMicrosPerItem(lines, (line) => projectLease((JSON.parse(line) as {object: unknown}).object))
  const protoMicros = cpuMicrosPerItem(frames, (frame) => decodeProtobufEvent(frame).lease)
  // Each JSON event line is decoded from bytes to a string first (the watch does, in LineSplitter).
  const jsonFromBytes = cpuMicrosPerItem(jsonRec.items, (bytes) => projectLease((JSON.parse(bytes.toString('utf8')) as {object: unknown}).object))
  const mean = (items: readonly Buffer[]) => items.reduce((sum, b) => sum + b.length, 0) / items.length

  process.stdout.write(`\nRun: ${events} Lease renewals recorded from kube-apiserver (${jsonRec.contentType} | ${protoRec.contentType}), decoded ${rounds} times; load average ${fmt(loadavg()[0]!, 2)} on ${availableParallelism()} cores\n`)
  printTable('A Lease watch event, decoded to what the controller keeps', [
    ['encoding', 'bytes per event', 'CPU µs per event', 'decode'],
    ['JSON', fmt(mean(jsonRec.items)), `${fmt(jsonMicros, 2)} (${fmt(jsonFromBytes, 2)} from bytes)`, 'JSON.parse (the whole event) + projectLease'],
    ['protobuf', fmt(mean(frames) + 4), fmt(protoMicros, 2), 'a reader of the projected fields only (others skipped by length)'],
  ])
} finally {
  progress('stopping the control plane')
  await plane.stop()
}
