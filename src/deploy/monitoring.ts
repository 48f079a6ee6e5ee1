/**
 * deploy/monitoring: a kustomize Component, off by default, that an operator adds to deploy/default
 * (`components: [../monitoring]`) where the Prometheus Operator and Grafana's dashboard sidecar run:
 * PodMonitors for the controller and for every poollet, the PrometheusRule of alerts.ts, and the
 * dashboard of dashboard.ts as a ConfigMap labelled `grafana_dashboard: "1"`.
 *
 * The PodMonitors set `job` (ironpool-controller, ironpool-poollet) and give each poollet's series the
 * label `pool`, from its pod's app.kubernetes.io/instance: the alerts select and name by those.
 */
import {POOL_KIND_NAMES, POOL_KINDS} from '../core/index.ts'
import {CONTROLLER_JOB, POOLLET_JOB, ruleGroups} from './alerts.ts'
import {dashboard} from './dashboard.ts'
import {metadata, type Manifest} from './manifest.ts'
import {CONTROLLER_NAME, CONTROLLER_NAMESPACE} from './names.ts'

const MONITORING = 'monitoring.coreos.com/v1'
const SCRAPE_INTERVAL = '30s'
export const DASHBOARD_FILE = 'ironpool.json'

function jobLabel(job: string): Record<string, unknown> {
  return {action: 'replace', targetLabel: 'job', replacement: job}
}

export function podMonitors(): Manifest[] {
  const poollets = POOL_KIND_NAMES.map((name) => `${POOL_KINDS[name].name}poollet`)
  return [
    {
      apiVersion: MONITORING,
      kind: 'PodMonitor',
      metadata: metadata(CONTROLLER_NAME, CONTROLLER_NAMESPACE),
      spec: {
        selector: {matchLabels: {'app.kubernetes.io/name': CONTROLLER_NAME}},
        podMetricsEndpoints: [{port: 'metrics', path: '/metrics', interval: SCRAPE_INTERVAL, relabelings: [jobLabel(CONTROLLER_JOB)]}],
      },
    },
    {
      apiVersion: MONITORING,
      kind: 'PodMonitor',
      metadata: metadata('ironpool-poollets', CONTROLLER_NAMESPACE),
      spec: {
        // Poollets run beside their pools, in whichever namespace the operator chose.
        namespaceSelector: {any: true},
        selector: {matchExpressions: [{key: 'app.kubernetes.io/name', operator: 'In', values: poollets}]},
        podMetricsEndpoints: [
          {
            port: 'metrics',
            path: '/metrics',
            interval: SCRAPE_INTERVAL,
            relabelings: [
              jobLabel(POOLLET_JOB),
              {action: 'replace', sourceLabels: ['__meta_kubernetes_pod_label_app_kubernetes_io_instance'], targetLabel: 'pool'},
            ],
          },
        ],
      },
    },
  ]
}

export function prometheusRuleObject(): Manifest {
  return {apiVersion: MONITORING, kind: 'PrometheusRule', metadata: metadata('ironpool', CONTROLLER_NAMESPACE), spec: ruleGroups()}
}

/** The dashboard's JSON, as committed in the ConfigMap (and read back by the tests). */
export function dashboardJson(): string {
  return JSON.stringify(dashboard(), null, 2) + '\n'
}

export function dashboardConfigMap(): Manifest {
  const meta = metadata('ironpool-dashboard', CONTROLLER_NAMESPACE) as {labels: Record<string, string>}
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {...meta, labels: {...meta.labels, grafana_dashboard: '1'}},
    data: {[DASHBOARD_FILE]: dashboardJson()},
  }
}
