/**
 * Run by string-sharing.test.ts in a child process of its own (a small heap, whose snapshot is quick
 * to take and read): projects three pools and their Leases as the controller's caches do, then counts
 * how many string instances of each watched value are alive in a heap snapshot. JavaScript cannot tell
 * two equal strings apart; a heap snapshot can. Prints the counts as JSON.
 */
import {getHeapSnapshot} from 'node:v8'
import {Interner, projectLease, projectPool, type ProjectedLease, type ProjectedPool} from '../../../../../src/kube/watch/caches/projections.ts'

// Made at run time, so that no literal in the code is one of the instances counted, and longer than
// the string values JSON.parse shares by itself (V8 internalizes those of up to 10 characters: with a
// short pid, "time-1234" came out as one instance whatever the projections did).
const unique = (...parts: string[]) => [...parts, process.pid, 'long-enough-not-to-be-internalized'].join('-')
const reason = unique('Reason')
const time = unique('time')
const namespace = unique('ns')
const names = [0, 1, 2].map((i) => unique('pool', String(i)))
/** A served object as the watch hands it over: JSON.parse's own copy of every string. */
const served = (object: unknown): unknown => JSON.parse(JSON.stringify(object))
const strings = new Interner()

const pools = new Map<string, ProjectedPool>()
const leases = new Map<string, ProjectedLease>()
// Lease first for one pool, pool first for the others: the sharing works whichever list comes first.
for (const [i, name] of names.entries()) {
  const pool = () => {
    const ready = {type: 'Ready', status: 'True', reason, message: 'm', lastTransitionTime: time}
    const projected = projectPool(served({apiVersion: 'v', kind: 'K', metadata: {name, uid: 'u'}, status: {conditions: [ready]}}), {strings, heldName: (n) => leases.get(n)?.name})
    pools.set(projected.name, projected)
  }
  const lease = () => {
    const projected = projectLease(served({metadata: {name, namespace}, spec: {renewTime: time}}), {strings, heldName: (n) => pools.get(n)?.name})
    leases.set(projected.name, projected)
  }
  if (i === 0) lease()
  if (i === 0) pool()
  else {
    pool()
    lease()
  }
}
// Each Lease renewed once more, as a watch event replaces it.
for (const name of names) {
  const projected = projectLease(served({metadata: {name, namespace}, spec: {renewTime: time}}), {strings, heldName: (n) => pools.get(n)?.name})
  leases.set(projected.name, projected)
}

interface Snapshot {
  snapshot: {meta: {node_fields: string[]; node_types: [string[]]}}
  nodes: number[]
  strings: string[]
}

const chunks: Buffer[] = []
for await (const chunk of getHeapSnapshot()) chunks.push(chunk as Buffer)
const snapshot = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Snapshot
const fields = snapshot.snapshot.meta.node_fields
const types = snapshot.snapshot.meta.node_types[0]
const [typeAt, nameAt] = [fields.indexOf('type'), fields.indexOf('name')]
const count = new Map<string, number>()
for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
  if (!types[snapshot.nodes[i + typeAt]!]!.includes('string')) continue
  const value = snapshot.strings[snapshot.nodes[i + nameAt]!]!
  count.set(value, (count.get(value) ?? 0) + 1)
}
const instances = (value: string) => count.get(value) ?? 0
process.stdout.write(
  `${JSON.stringify({names: names.map(instances), reason: instances(reason), namespace: instances(namespace), time: instances(time), held: [pools.size, leases.size]})}\n`,
)
