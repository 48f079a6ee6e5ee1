/**
 * Every Lease of one namespace, fresh, for the engine's batched confirmation (confirm-batcher.ts): the
 * consistent list (which lease-list.ts of issue 26 read whole) read the way the caches read theirs, so that what cannot blind the
 * caches cannot fail the confirmation either (issue 29: with 24 Leases of 1.45 MB, a list read whole
 * up to 32 MiB failed every time, and no batch of due pools was ever confirmed). A page over the cap
 * is asked again with half the limit; a Lease over the limit of one object is left out, as the cache
 * leaves it out (its pool reads as having no Lease in both); each Lease kept as its projection. One
 * deadline bounds the whole list, so a slow list is a failed confirmation, not a hang. Given the names
 * of a batch, only their Leases are kept: a mass death at 100,000 pools held every Lease of the
 * namespace twice over (the snapshot, then the Leases made of it) and peaked at 586 MiB RSS.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import type {Lease, Logger} from '../../../core/index.ts'
import {toLease} from '../../stores/lease-store.ts'
import {ObjectGate} from '../list-watch-gate.ts'
import {listAll} from '../list-watch-list.ts'
import {customObjectSource} from '../list-watch-source.ts'
import {projectLease, type RawLease} from './projections.ts'

const PAGE = 500

export function createLeaseSnapshot(kc: KubeConfig, namespace: string, timeoutMs: number, logger: Logger): (signal: AbortSignal, names?: ReadonlySet<string>) => Promise<Lease[]> {
  const resource = `leases ${namespace}`
  const source = customObjectSource<RawLease>(kc, {group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespace}, {inactivityTimeoutMs: timeoutMs, listTimeoutMs: timeoutMs, transform: (object) => projectLease(object)})
  const gate = new ObjectGate<RawLease>({resource, logger, validate: undefined, onInvalid: () => {}})
  return async (signal, names) => {
    const keep = names === undefined ? undefined : (lease: RawLease) => names.has(lease.metadata.name)
    const snapshot = await listAll(source.list, PAGE, gate, AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]), undefined, keep)
    // The namespace set on the Lease made, not by spreading the projection (its fields are views on its prototype).
    return [...snapshot.objects.values()].map((raw) => Object.assign(toLease(raw), {namespace}))
  }
}
