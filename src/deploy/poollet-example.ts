/**
 * deploy/poollet/example: a poollet for one machine pool. Kept out of deploy/default because it cannot
 * run until its kubeconfig Secret exists and it is pinned to the pool's host (deploy/poollet/README.md).
 */
import type {PoolKind} from '../core/index.ts'
import {metadata, type Manifest} from './manifest.ts'
import {CONTROLLER_NAMESPACE, IMAGE} from './names.ts'
import {CONTAINER_SECURITY_CONTEXT, POD_SECURITY_CONTEXT, RESOURCES, RUN_AS_USER, TMP_MOUNT, TMP_VOLUME} from './security.ts'

export const EXAMPLE_POOL = 'example-pool'
/** The poollet's /metrics (off unless asked for: --metrics-bind-address defaults to 0). */
export const POOLLET_METRICS_PORT = 8080
export const KUBECONFIG_DIR = '/etc/ironpool/kubeconfig'
/** The directory of the IRI runtime's well-known sockets (iep15.md): the host's, seen at the same path. */
export const RUNTIME_SOCKET_DIR = '/var/run'

export function poolletDeploymentName(kind: PoolKind, pool: string): string {
  return `${kind.name}poollet-${pool}`
}

export function kubeconfigSecretName(kind: PoolKind, pool: string): string {
  return `${poolletDeploymentName(kind, pool)}-kubeconfig`
}

export function poolletDeployment(kind: PoolKind, pool: string): Manifest {
  const name = poolletDeploymentName(kind, pool)
  const labels = {'app.kubernetes.io/name': `${kind.name}poollet`, 'app.kubernetes.io/instance': pool}
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata(name, CONTROLLER_NAMESPACE),
    spec: {
      // One poollet per pool: two would take the Lease from each other on every tick.
      replicas: 1,
      strategy: {type: 'Recreate'},
      selector: {matchLabels: labels},
      template: {
        metadata: {labels},
        spec: {
          // The poollet authenticates with its own certificate (the kubeconfig below), never as a ServiceAccount.
          automountServiceAccountToken: false,
          // fsGroup makes the Secret's files group-readable by the non-root user (mode 0440 below).
          securityContext: {...POD_SECURITY_CONTEXT, fsGroup: RUN_AS_USER},
          containers: [
            {
              name: 'poollet',
              image: IMAGE,
              // --kubeconfig, not $KUBECONFIG: the poollet prefers in-cluster configuration to $KUBECONFIG,
              // and in a pod that would be the wrong identity (or none, with no token mounted).
              args: ['poollet', `--pool-name=${pool}`, `--kind=${kind.name}`, `--kubeconfig=${KUBECONFIG_DIR}/kubeconfig`, `--metrics-bind-address=:${POOLLET_METRICS_PORT}`],
              // Named: deploy/monitoring's PodMonitor scrapes the port called metrics.
              ports: [{name: 'metrics', containerPort: POOLLET_METRICS_PORT, protocol: 'TCP'}],
              // Not ready while another live holder renews the pool's Lease (the poollet yields it) or
              // before it runs; /readyz and /healthz share the metrics address, plain HTTP, for the kubelet.
              readinessProbe: {httpGet: {path: '/readyz', port: 'metrics'}, initialDelaySeconds: 5, periodSeconds: 10},
              resources: RESOURCES,
              securityContext: CONTAINER_SECURITY_CONTEXT,
              volumeMounts: [
                {name: 'kubeconfig', mountPath: KUBECONFIG_DIR, readOnly: true},
                // Read-only is enough: connect() on a unix socket writes nothing to the filesystem.
                {name: 'runtime-sockets', mountPath: RUNTIME_SOCKET_DIR, readOnly: true},
                TMP_MOUNT,
              ],
            },
          ],
          volumes: [
            {name: 'kubeconfig', secret: {secretName: kubeconfigSecretName(kind, pool), defaultMode: 0o440}},
            {name: 'runtime-sockets', hostPath: {path: RUNTIME_SOCKET_DIR, type: 'Directory'}},
            TMP_VOLUME,
          ],
        },
      },
    },
  }
}
