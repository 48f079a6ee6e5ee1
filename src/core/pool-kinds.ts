/**
 * The one table of pool kinds. Everything kind-specific (API resource, Lease namespace, IRI probe,
 * condition strings, identities) is read from here; no file is copied per kind.
 * Facts from IronCore's IEP-15 (../shared/reference/iep15.md); strings must match exactly.
 */
export const POOL_KIND_NAMES = ['machine', 'volume', 'bucket'] as const
export type PoolKindName = (typeof POOL_KIND_NAMES)[number]

export interface PoolKind {
  readonly name: PoolKindName
  /** API group, version, plural resource and Kind of the cluster-scoped pool object. */
  readonly group: string
  readonly version: string
  readonly plural: string
  readonly kind: string
  /** Namespace of the pool's Lease; the Lease is named after the pool. */
  readonly leaseNamespace: string
  /** RBAC group of this kind's poollets, and the username prefix followed by the pool name. */
  readonly poolletGroup: string
  readonly poolletUserPrefix: string
  /**
   * IronCore's bootstrap identities: the group a bootstrap token of this kind's poollets carries, and the
   * subresource of certificatesigningrequests whose `create` a SubjectAccessReview checks before a
   * poollet's client certificate is approved for a requester that is not a poollet (IronCore's names).
   */
  readonly bootstrapperGroup: string
  readonly csrSubresource: string
  /**
   * The subresource a poollet renewing its own certificate must be allowed to `create`, after
   * Kubernetes' `selfnodeclient` (IronCore names none: its poollets hold csrSubresource itself).
   */
  readonly selfCsrSubresource: string
  /** IRI runtime probe: gRPC service (package-qualified) and method. */
  readonly runtimeService: string
  readonly probeMethod: string
  /** The probe's method as gRPC names it, with the leading `/`: the one spelling in every Ready message. */
  readonly probePath: string
  /** Environment variable naming the runtime endpoint, then the well-known sockets in order. */
  readonly runtimeEndpointEnv: string
  readonly wellKnownSockets: readonly string[]
  /** Ready condition strings. */
  readonly readyMessage: string
  readonly unknownReason: string
  readonly unknownMessage: string
}

export const READY_CONDITION = 'Ready'
export const REASON_HEARTBEAT_RECEIVED = 'HeartbeatReceived'
export const REASON_RUNTIME_UNREACHABLE = 'RuntimeUnreachable'

function poolKind(
  name: PoolKindName,
  group: string,
  kind: string,
  runtimeService: string,
  probeMethod: string,
): PoolKind {
  const plural = `${name}pools`
  return {
    name,
    group,
    version: 'v1alpha1',
    plural,
    kind,
    leaseNamespace: `ironcore-${name}pool-lease`,
    poolletGroup: `${group}:system:${plural}`,
    poolletUserPrefix: `${group}:system:${name}pool:`,
    bootstrapperGroup: `system:bootstrappers:${group.replaceAll('.', '-')}:${plural}`,
    csrSubresource: `${name}poolclient`,
    selfCsrSubresource: `self${name}poolclient`,
    runtimeService,
    probeMethod,
    probePath: `/${runtimeService}/${probeMethod}`,
    runtimeEndpointEnv: `IRI_${name.toUpperCase()}_RUNTIME_ENDPOINT`,
    wellKnownSockets: [`/var/run/iri-${name}broker.sock`, `/var/run/iri-${name}provider.sock`],
    readyMessage: `${name} runtime status probe succeeded`,
    unknownReason: `${kind}StatusUnknown`,
    unknownMessage: `${name}poollet stopped posting ${name} pool status.`,
  }
}

export const POOL_KINDS: Readonly<Record<PoolKindName, PoolKind>> = {
  machine: poolKind('machine', 'compute.ironcore.dev', 'MachinePool', 'machine.v1alpha1.MachineRuntime', 'Status'),
  volume: poolKind('volume', 'storage.ironcore.dev', 'VolumePool', 'volume.v1alpha1.VolumeRuntime', 'Status'),
  bucket: poolKind('bucket', 'storage.ironcore.dev', 'BucketPool', 'bucket.v1alpha1.BucketRuntime', 'ListBucketClasses'),
}

export function isPoolKindName(value: string): value is PoolKindName {
  return (POOL_KIND_NAMES as readonly string[]).includes(value)
}

/** The pool named in a poollet's username, or undefined when the username is not this kind's poollet. */
export function poolFromPoolletUser(kind: PoolKind, username: string): string | undefined {
  return username.startsWith(kind.poolletUserPrefix) ? username.slice(kind.poolletUserPrefix.length) || undefined : undefined
}
