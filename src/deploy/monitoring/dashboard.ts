/**
 * ironpool's Grafana dashboard, generated: deploy/monitoring ships it as a ConfigMap for Grafana's
 * dashboard sidecar. Every panel names its unit and says what it shows; a test parses every expression
 * (lezer-promql) and checks that each metric it names is one ironpool exports.
 */
import {CONTROLLER_JOB, POOLLET_JOB} from './alerts.ts'

export interface PanelSpec {
  title: string
  description: string
  /** A Grafana unit id: s, short, ops, bool, percentunit, ... */
  unit: string
  targets: ReadonlyArray<{expr: string; legend: string}>
}

export interface RowSpec {
  title: string
  panels: readonly PanelSpec[]
}

const c = `job="${CONTROLLER_JOB}"`
const p = `job="${POOLLET_JOB}"`
const W = '5m'
const quantiles = (metric: string, by: string, filter: string) =>
  [0.5, 0.99].map((q) => ({expr: `histogram_quantile(${q}, sum by (le, ${by}) (rate(${metric}_bucket{${filter}}[${W}])))`, legend: `p${q * 100} {{${by}}}`}))

export const DASHBOARD_ROWS: readonly RowSpec[] = [
  {
    title: 'Pools',
    panels: [
      {
        title: 'Pools by kind and Ready status',
        description: 'Pools the controller sees, by kind and Ready status (None: no Ready yet). The highest count of any replica.',
        unit: 'short',
        targets: [{expr: `max by (kind, status) (ironpool_controller_pools{${c}})`, legend: '{{kind}} {{status}}'}],
      },
      {
        title: 'Overdue pools',
        description: 'Pools past their grace period (silence counted while the view was whole) that are not marked Ready=Unknown yet, and how far past its deadline the oldest one is.',
        unit: 'short',
        targets: [{expr: `max by (kind) (ironpool_controller_pools_overdue{${c}})`, legend: '{{kind}} overdue'}],
      },
      {
        title: 'Oldest overdue pool',
        description: 'How far past its grace deadline the oldest overdue, unmarked pool is; 0 when none. Above a minute, IronpoolPoolsOverdue fires.',
        unit: 's',
        targets: [{expr: `max by (kind) (ironpool_controller_oldest_overdue_seconds{${c}})`, legend: '{{kind}}'}],
      },
    ],
  },
  {
    title: 'Marks',
    panels: [
      {
        title: 'Ready=Unknown marks',
        description: 'Ready=Unknown writes that landed, and those that failed, per second.',
        unit: 'ops',
        targets: [
          {expr: `sum by (kind) (rate(ironpool_controller_pools_marked_unknown_total{${c}}[${W}]))`, legend: '{{kind}} marked'},
          {expr: `sum by (kind) (rate(ironpool_controller_unknown_write_failures_total{${c}}[${W}]))`, legend: '{{kind}} failed'},
        ],
      },
      {
        title: 'Unknown write delay',
        description: 'From a pool\'s grace deadline to its Ready=Unknown write landing (target: p99 under 1 s).',
        unit: 's',
        targets: [0.5, 0.99].map((q) => ({expr: `histogram_quantile(${q}, sum by (le) (rate(ironpool_controller_unknown_write_delay_seconds_bucket{${c}}[${W}])))`, legend: `p${q * 100}`})),
      },
      {
        title: 'Confirming reads',
        description: 'Fresh Lease reads before a mark, by outcome: silent (marked), renewed (progress the watch had not shown), failed (blindness, not a verdict).',
        unit: 'ops',
        targets: [{expr: `sum by (kind, outcome) (rate(ironpool_controller_confirm_reads_total{${c}}[${W}]))`, legend: '{{kind}} {{outcome}}'}],
      },
    ],
  },
  {
    title: 'Controller sight',
    panels: [
      {
        title: 'View whole',
        description: 'Whether each replica\'s view of each kind is whole (1: it may judge) or not (0).',
        unit: 'bool',
        targets: [{expr: `min by (instance, kind) (ironpool_controller_view_whole{${c}})`, legend: '{{instance}} {{kind}}'}],
      },
      {
        title: 'Blind time by reason',
        description: 'The share of time each kind\'s view was not whole, by reason (paused, api-unanswered, watch-gap, not-synced); counted when a spell ends or changes reason.',
        unit: 'percentunit',
        targets: [{expr: `sum by (kind, reason) (rate(ironpool_controller_blind_seconds_total{${c}}[${W}]))`, legend: '{{kind}} {{reason}}'}],
      },
      {
        title: 'Leader and breaker',
        description: 'Which replica leads (1), and whether a kind\'s --max-unhealthy breaker holds marks back (1).',
        unit: 'bool',
        targets: [
          {expr: `max by (instance) (ironpool_controller_leader{${c}})`, legend: 'leader {{instance}}'},
          {expr: `max by (kind) (ironpool_controller_breaker_open{${c}})`, legend: 'breaker {{kind}}'},
        ],
      },
      {
        title: 'API probe latency',
        description: 'The controller\'s quorum read of the API, failed ones included: slow or failing, the view goes blind (api-unanswered).',
        unit: 's',
        targets: quantiles('ironpool_controller_api_probe_duration_seconds', 'instance', c),
      },
      {
        title: 'API probe failures',
        description: 'API probes that failed or missed their deadline, per second.',
        unit: 'ops',
        targets: [{expr: `sum by (instance) (rate(ironpool_controller_api_probe_failures_total{${c}}[${W}]))`, legend: '{{instance}}'}],
      },
    ],
  },
  {
    title: 'Poollets',
    panels: [
      {
        title: 'Lease renewal latency',
        description: 'Each poollet\'s Lease renewals, retries included.',
        unit: 's',
        targets: quantiles('ironpool_poollet_lease_renew_duration_seconds', 'pool', p),
      },
      {
        title: 'Lease renewal failures',
        description: 'Renewals that failed after their bounded retries, per second, by pool.',
        unit: 'ops',
        targets: [{expr: `sum by (pool) (rate(ironpool_poollet_lease_renew_failures_total{${p}}[${W}]))`, legend: '{{pool}}'}],
      },
      {
        title: 'Runtime probe latency',
        description: 'Each poollet\'s probes of its IRI runtime, failed ones included.',
        unit: 's',
        targets: quantiles('ironpool_poollet_probe_duration_seconds', 'pool', p),
      },
      {
        title: 'Runtime probe failures',
        description: 'The share of runtime probes that failed or missed their deadline, by pool.',
        unit: 'percentunit',
        targets: [
          {
            expr: `sum by (pool) (rate(ironpool_poollet_probe_failures_total{${p}}[${W}])) / sum by (pool) (rate(ironpool_poollet_probe_duration_seconds_count{${p}}[${W}]))`,
            legend: '{{pool}}',
          },
        ],
      },
      {
        title: 'Client certificate time left',
        description: 'Until the client certificate each poollet authenticates with expires (warning under 7 days, critical under 1).',
        unit: 's',
        targets: [{expr: `min by (pool) (ironpool_poollet_certificate_expiration_timestamp_seconds{${p}}) - time()`, legend: '{{pool}}'}],
      },
      {
        title: 'Certificate rotation failures',
        description: 'Client certificate renewals that failed in the last hour, by pool.',
        unit: 'short',
        targets: [{expr: `sum by (pool) (increase(ironpool_poollet_certificate_rotation_failures_total{${p}}[1h]))`, legend: '{{pool}}'}],
      },
    ],
  },
  {
    title: 'CSR approver (--approve-poollet-csrs)',
    panels: [
      {
        title: 'CSR cache whole',
        description: "Whether each replica's cache of client-certificate CSRs is whole (1) or not (0); while the leader's is not, it approves nothing (IronpoolCsrApproverBlind after 10 minutes). Empty where no replica approves.",
        unit: 'bool',
        targets: [{expr: `max by (pod) (ironpool_controller_csr_cache_whole{${c}})`, legend: '{{pod}}'}],
      },
      {
        title: 'CSR decisions',
        description: "Poollets' CSRs approved, and refused by rule (encoding, key, pool-exists, subject-access-review, ...), in the last hour.",
        unit: 'short',
        targets: [{expr: `sum by (outcome) (increase(ironpool_controller_csr_decisions_total{${c}}[1h]))`, legend: '{{outcome}}'}],
      },
    ],
  },
]

const PANEL_WIDTH = 8
const PANEL_HEIGHT = 8
const DATASOURCE = {type: 'prometheus', uid: '${datasource}'}

/** The dashboard as Grafana's JSON model (schema 39): rows of time series, three panels to a line. */
export function dashboard(): Record<string, unknown> {
  const panels: Array<Record<string, unknown>> = []
  let id = 1
  let y = 0
  for (const row of DASHBOARD_ROWS) {
    panels.push({id: id++, type: 'row', title: row.title, collapsed: false, gridPos: {h: 1, w: 24, x: 0, y: y++}, panels: []})
    row.panels.forEach((panel, i) => {
      const x = (i % 3) * PANEL_WIDTH
      if (i > 0 && i % 3 === 0) y += PANEL_HEIGHT
      panels.push({
        id: id++,
        type: 'timeseries',
        title: panel.title,
        description: panel.description,
        datasource: DATASOURCE,
        gridPos: {h: PANEL_HEIGHT, w: PANEL_WIDTH, x, y},
        fieldConfig: {defaults: {unit: panel.unit}, overrides: []},
        options: {legend: {displayMode: 'list', placement: 'bottom'}, tooltip: {mode: 'multi'}},
        targets: panel.targets.map((target, t) => ({refId: String.fromCharCode(65 + t), datasource: DATASOURCE, expr: target.expr, legendFormat: target.legend})),
      })
    })
    y += PANEL_HEIGHT
  }
  return {
    uid: 'ironpool',
    title: 'ironpool',
    description: 'Pool health as ironpool sees it: pools by Ready status, the controller\'s marks and sight, the poollets\' renewals, probes and certificates.',
    tags: ['ironpool'],
    schemaVersion: 39,
    editable: false,
    time: {from: 'now-6h', to: 'now'},
    refresh: '30s',
    templating: {list: [{name: 'datasource', type: 'datasource', query: 'prometheus', label: 'Data source'}]},
    panels,
  }
}
