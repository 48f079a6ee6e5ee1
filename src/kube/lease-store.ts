/** The core's LeaseStore port on client-node: the Leases of one namespace. */
import {CoordinationV1Api, type KubeConfig, type V1Lease} from '@kubernetes/client-node'
import {type LeaseStore, type Lease, NotFoundError} from '../core/index.ts'
import {attempt} from './api-errors.ts'

export function toLease(v1: V1Lease): Lease {
  const spec = v1.spec ?? {}
  // MicroTime fields are not deserialised by client-node (no type for them): they arrive as strings.
  const time = (value: unknown) => (typeof value === 'string' ? value : value instanceof Date ? value.toISOString() : undefined)
  return {
    name: v1.metadata?.name ?? '',
    namespace: v1.metadata?.namespace ?? '',
    resourceVersion: v1.metadata?.resourceVersion,
    spec: {
      holderIdentity: spec.holderIdentity,
      leaseDurationSeconds: spec.leaseDurationSeconds,
      acquireTime: time(spec.acquireTime),
      renewTime: time(spec.renewTime),
      leaseTransitions: spec.leaseTransitions,
    },
  }
}

function toV1Lease(lease: Lease): V1Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {name: lease.name, namespace: lease.namespace, ...(lease.resourceVersion ? {resourceVersion: lease.resourceVersion} : {})},
    // Strings with six fractional digits pass through client-node's serialiser untouched.
    spec: lease.spec as V1Lease['spec'],
  }
}

export function createLeaseStore(kc: KubeConfig, namespace: string): LeaseStore {
  const api = kc.makeApiClient(CoordinationV1Api)
  const resource = (name: string) => `lease ${namespace}/${name}`
  return {
    async get(name) {
      try {
        return toLease(await attempt({verb: 'get', resource: resource(name)}, () => api.readNamespacedLease({name, namespace})))
      } catch (error) {
        if (error instanceof NotFoundError) return undefined
        throw error
      }
    },
    async create(lease) {
      return toLease(await attempt({verb: 'create', resource: resource(lease.name)}, () => api.createNamespacedLease({namespace, body: toV1Lease(lease)})))
    },
    async update(lease) {
      return toLease(
        await attempt({verb: 'update', resource: resource(lease.name)}, () =>
          api.replaceNamespacedLease({name: lease.name, namespace, body: toV1Lease(lease)}),
        ),
      )
    },
  }
}
