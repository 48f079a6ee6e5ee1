/**
 * The controller's Deployment: two replicas behind leader election (one writes, one waits to take over),
 * probes and metrics on the ports DESIGN.md names, and the restricted security profile.
 */
import {metadata, type Manifest} from './manifest.ts'
import {CONTROLLER_NAME, CONTROLLER_NAMESPACE, IMAGE, LEADER_ELECTION_ID} from './names.ts'
import {CONTAINER_SECURITY_CONTEXT, POD_SECURITY_CONTEXT, RESOURCES, TMP_MOUNT, TMP_VOLUME} from './security.ts'

export const METRICS_PORT = 8080
export const HEALTH_PORT = 8081

export const CONTROLLER_ARGS = [
  'controller',
  '--leader-elect',
  `--leader-election-namespace=${CONTROLLER_NAMESPACE}`,
  `--leader-election-id=${LEADER_ELECTION_ID}`,
  `--metrics-bind-address=:${METRICS_PORT}`,
  // HTTPS, and only to a token RBAC allows `get /metrics` (deploy/monitoring's scraper); probes stay plain.
  '--metrics-secure',
  `--health-probe-bind-address=:${HEALTH_PORT}`,
]

const probe = (path: string, periodSeconds: number): Manifest => ({httpGet: {path, port: 'health'}, initialDelaySeconds: 5, periodSeconds})

export function controllerDeployment(): Manifest {
  const labels = {'app.kubernetes.io/name': CONTROLLER_NAME}
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata(CONTROLLER_NAME, CONTROLLER_NAMESPACE),
    spec: {
      replicas: 2,
      selector: {matchLabels: labels},
      template: {
        metadata: {labels},
        spec: {
          serviceAccountName: CONTROLLER_NAME,
          securityContext: POD_SECURITY_CONTEXT,
          // A standby on the leader's node would die with it: prefer spreading the two replicas.
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, podAffinityTerm: {labelSelector: {matchLabels: labels}, topologyKey: 'kubernetes.io/hostname'}}],
            },
          },
          // SIGTERM finishes the write in flight within a few seconds (DESIGN.md, Operations).
          terminationGracePeriodSeconds: 10,
          containers: [
            {
              name: 'controller',
              image: IMAGE,
              args: CONTROLLER_ARGS,
              ports: [
                {name: 'metrics', containerPort: METRICS_PORT, protocol: 'TCP'},
                {name: 'health', containerPort: HEALTH_PORT, protocol: 'TCP'},
              ],
              livenessProbe: probe('/healthz', 20),
              readinessProbe: probe('/readyz', 10),
              resources: RESOURCES,
              securityContext: CONTAINER_SECURITY_CONTEXT,
              volumeMounts: [TMP_MOUNT],
            },
          ],
          volumes: [TMP_VOLUME],
        },
      },
    },
  }
}
