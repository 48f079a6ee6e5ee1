/**
 * deploy/monitoring: a kustomize Component, off by default, that an operator adds to deploy/default
 * (`components: [../monitoring]`) where the Prometheus Operator and Grafana's dashboard sidecar run:
 * PodMonitors for the controller and for every poollet, the PrometheusRule of alerts.ts, and the
 * dashboard of dashboard.ts as a ConfigMap labelled `grafana_dashboard: "1"`.
 *
 * The PodMonitors set `job` (ironpool-controller, ironpool-poollet) and give each poollet's series the
 * label `pool`, from its pod's app.kubernetes.io/instance: the alerts select and name by those.
 */
import {POOL_KIND_NAMES, POOL_KINDS} from '../../core/index.ts'
import {CONTROLLER_JOB, POOLLET_JOB, ruleGroups} from './alerts.ts'
import {dashboard} from './dashboard.ts'
import {clusterRole, clusterRoleBinding, metadata, serviceAccount, serviceAccountSubject, type Manifest} from '../manifest.ts'
import {CONTROLLER_NAME, CONTROLLER_NAMESPACE} from '../names.ts'

const MONITORING = 'monitoring.coreos.com/v1'
const SCRAPE_INTERVAL = '30s'
export const DASHBOARD_FILE = 'ironpool.json'

function jobLabel(job: string): Record<string, unknown> {
  return {action: 'replace', targetLabel: 'job', replacement: job}
}

/** Who may read /metrics: `get` on the non-resource URL, which the controller's --metrics-secure asks a SubjectAccessReview about. */
export const METRICS_READER_ROLE = 'ironpool-metrics-reader'
/** The ServiceAccount whose token the controller's PodMonitor presents, and the Secret that holds its token. */
export const SCRAPER_SERVICE_ACCOUNT = 'ironpool-prometheus'
export const SCRAPER_TOKEN_SECRET = `${SCRAPER_SERVICE_ACCOUNT}-token`
/** kube-prometheus' Prometheus (namespace monitoring, ServiceAccount prometheus-k8s), should it scrape with its own token. */
export const KUBE_PROMETHEUS_SERVICE_ACCOUNT = {namespace: 'monitoring', name: 'prometheus-k8s'}

/**
 * The RBAC of the scrape (controller-runtime's `metrics-reader` ClusterRole): a ClusterRole of `get` on
 * `/metrics`, bound to ironpool's own scraper ServiceAccount, whose token (a legacy token Secret, which
 * kube-controller-manager fills in) the controller's PodMonitor sends as its bearer token, and to
 * kube-prometheus' Prometheus ServiceAccount. A PodMonitor reads a Secret in its own namespace only, so
 * the token it sends is one of this namespace; Prometheus' own ServiceAccount lives elsewhere.
 */
export function metricsReaderRbac(): Manifest[] {
  return [
    clusterRole(METRICS_READER_ROLE, [{nonResourceURLs: ['/metrics'], verbs: ['get']}]),
    serviceAccount(SCRAPER_SERVICE_ACCOUNT, CONTROLLER_NAMESPACE),
    {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/service-account-token',
      metadata: {...(metadata(SCRAPER_TOKEN_SECRET, CONTROLLER_NAMESPACE) as object), annotations: {'kubernetes.io/service-account.name': SCRAPER_SERVICE_ACCOUNT}},
    },
    clusterRoleBinding(METRICS_READER_ROLE, [
      serviceAccountSubject(SCRAPER_SERVICE_ACCOUNT, CONTROLLER_NAMESPACE),
      serviceAccountSubject(KUBE_PROMETHEUS_SERVICE_ACCOUNT.name, KUBE_PROMETHEUS_SERVICE_ACCOUNT.namespace),
    ]),
  ]
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
        podMetricsEndpoints: [
          {
            port: 'metrics',
            path: '/metrics',
            interval: SCRAPE_INTERVAL,
            // The controller runs --metrics-secure: HTTPS with its self-signed certificate (give it
            // --metrics-cert-dir and a tlsConfig.ca to verify), and the scraper's token for its TokenReview.
            scheme: 'https',
            tlsConfig: {insecureSkipVerify: true},
            authorization: {type: 'Bearer', credentials: {name: SCRAPER_TOKEN_SECRET, key: 'token'}},
            relabelings: [jobLabel(CONTROLLER_JOB)],
          },
        ],
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
