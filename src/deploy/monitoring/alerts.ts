/**
 * ironpool's alerts: one table, rendered into deploy/monitoring's PrometheusRule, checked by promtool
 * (`check rules`, `test rules` with cases that fire and cases that do not) and replayed from real faults
 * (test/integration/monitoring/). Each alert links a section of docs/runbooks.md named after it.
 *
 * The controller is the detector, so it is watched first: absent, leaderless, blind, tripped, slow or
 * failing to mark. Then the pools it reports (as kubernetes-mixin's KubeNodeNotReady and
 * KubeNodeReadinessFlapping, for 15 m) and each poollet's own troubles (renewals, runtime probe, client
 * certificate, as the kubelet's). Durations are for the default 50 s grace period: "a few grace periods"
 * is 3 m. Aggregations name their labels (`by`), so every alert's labels are known and tested exactly.
 */

/** The job labels the PodMonitors of deploy/monitoring give their targets. */
export const CONTROLLER_JOB = 'ironpool-controller'
export const POOLLET_JOB = 'ironpool-poollet'

/** Where runbook_url points: docs/runbooks.md of the published repository, one section per alert. */
export const RUNBOOK_BASE = 'https://github.com/ironpool/ironpool/blob/main/docs/runbooks.md'

export type Severity = 'warning' | 'critical'

export interface AlertRule {
  alert: string
  expr: string
  /** Prometheus duration; '0m' fires at the first evaluation that holds. */
  for: string
  severity: Severity
  summary: string
  description: string
}

export interface AlertGroup {
  name: string
  rules: readonly AlertRule[]
}

const c = `job="${CONTROLLER_JOB}"`
const p = `job="${POOLLET_JOB}"`
const DAY = 86_400

export const ALERT_GROUPS: readonly AlertGroup[] = [
  {
    name: 'ironpool-controller',
    rules: [
      {
        alert: 'IronpoolControllerDown',
        expr: `absent(up{${c}} == 1)`,
        for: '5m',
        severity: 'critical',
        summary: 'No ironpool controller is up.',
        description: 'No replica of the ironpool controller has answered a scrape for 5 minutes. While none runs, no silent pool is marked Ready=Unknown: a dead pool keeps its last Ready.',
      },
      {
        alert: 'IronpoolControllerNoLeader',
        expr: `max(ironpool_controller_leader{${c}}) == 0`,
        for: '5m',
        severity: 'critical',
        summary: 'No ironpool controller replica leads.',
        description: 'Controller replicas are up but none has held the leader-election Lease for 5 minutes, so none marks silent pools Ready=Unknown.',
      },
      {
        alert: 'IronpoolControllerBlind',
        // The leader's view only: a standby's blindness marks nothing and misses nothing.
        expr: `max by (kind, reason) (ironpool_controller_view_blind{${c}} * on (instance) group_left () ironpool_controller_leader{${c}}) == 1`,
        for: '3m',
        severity: 'critical',
        summary: 'The ironpool controller cannot see {{ $labels.kind }} pools ({{ $labels.reason }}).',
        description: 'The leading controller\'s view of {{ $labels.kind }} pools has not been whole for 3 minutes (the spell began with {{ $labels.reason }}). It marks no {{ $labels.kind }} pool while blind: silence counts only while it sees, so a pool that died meanwhile is marked that much later.',
      },
      {
        alert: 'IronpoolControllerBreakerOpen',
        expr: `max by (kind) (ironpool_controller_breaker_open{${c}}) == 1`,
        for: '5m',
        severity: 'critical',
        summary: 'The ironpool controller holds back marking {{ $labels.kind }} pools (--max-unhealthy).',
        description: 'More {{ $labels.kind }} pools went silent at once than --max-unhealthy allows, so for 5 minutes the controller has marked none of them Ready=Unknown. Either a wide outage (network, API path) or many dead pools.',
      },
      {
        alert: 'IronpoolControllerZoneHeld',
        expr: `max by (kind, zone) (ironpool_controller_zone_breaker_open{${c}}) == 1`,
        for: '5m',
        severity: 'warning',
        summary: 'The ironpool controller holds back marking {{ $labels.kind }} pools in zone {{ $labels.zone }} (--max-unhealthy, per zone).',
        description: 'More {{ $labels.kind }} pools of zone {{ $labels.zone }} went silent at once than --max-unhealthy allows, so for 5 minutes the controller has marked none of them Ready=Unknown; other zones are judged as usual. A zone cut off (network, power) or many dead pools in it.',
      },
      {
        alert: 'IronpoolPoolsOverdue',
        expr: `max by (kind) (ironpool_controller_oldest_overdue_seconds{${c}}) > 60 unless on (kind) max by (kind) (ironpool_controller_breaker_open{${c}}) == 1`,
        for: '2m',
        severity: 'critical',
        summary: 'Silent {{ $labels.kind }} pools are not being marked Ready=Unknown.',
        description: 'A {{ $labels.kind }} pool has been past its grace period, with the view whole and the breaker closed, for {{ $value | humanizeDuration }} without being marked Ready=Unknown (ironpool_controller_pools_overdue counts them).',
      },
      {
        alert: 'IronpoolCsrApproverBlind',
        // The leader's only (it alone approves); the gauge exists only where --approve-poollet-csrs runs.
        expr: `max(ironpool_controller_csr_cache_whole{${c}} and on (instance) ironpool_controller_leader{${c}} == 1) == 0`,
        for: '10m',
        severity: 'critical',
        summary: 'The ironpool CSR approver cannot see CSRs and approves none.',
        description: 'The leading controller\'s cache of client-certificate CSRs (--approve-poollet-csrs) has not been whole for 10 minutes: it approves no poollet\'s CSR, so no poollet bootstraps and none renews its certificate, and pools go Unknown as their certificates expire.',
      },
      {
        alert: 'IronpoolUnknownWritesFailing',
        expr: `sum by (kind) (rate(ironpool_controller_unknown_write_failures_total{${c}}[5m])) > 0`,
        for: '10m',
        severity: 'warning',
        summary: 'The ironpool controller\'s Ready=Unknown writes for {{ $labels.kind }} pools fail.',
        description: 'For 10 minutes, writes of Ready=Unknown to silent {{ $labels.kind }} pools have been failing ({{ $value | printf "%.2f" }} a second). The controller retries them; until one lands the pool shows its last Ready.',
      },
      {
        alert: 'IronpoolUnknownWritesSlow',
        expr: `histogram_quantile(0.99, sum by (le) (rate(ironpool_controller_unknown_write_delay_seconds_bucket{${c}}[15m]))) > 5`,
        for: '15m',
        severity: 'warning',
        summary: 'The ironpool controller marks silent pools late.',
        description: 'The 99th percentile of the delay from a pool\'s grace deadline to its Ready=Unknown write landing is {{ $value | humanizeDuration }} (target: under 1 s).',
      },
    ],
  },
  {
    name: 'ironpool-pools',
    rules: [
      {
        alert: 'IronpoolPoolsNotReady',
        expr: `max by (kind, status) (ironpool_controller_pools{${c}, status=~"Unknown|False"}) > 0`,
        for: '15m',
        severity: 'warning',
        summary: '{{ $value }} {{ $labels.kind }} pools are Ready={{ $labels.status }}.',
        description: '{{ $value }} {{ $labels.kind }} pools have been Ready={{ $labels.status }} for 15 minutes: Unknown when the controller heard nothing from their poollets for a grace period, False when their poollets report their IRI runtimes unreachable.',
      },
      {
        alert: 'IronpoolPoolReadyFlapping',
        expr: `sum by (namespace, pool, kind) (increase(ironpool_poollet_ready_transitions_total{${p}}[15m])) > 2`,
        for: '15m',
        severity: 'warning',
        summary: 'The Ready condition of {{ $labels.kind }} pool {{ $labels.pool }} flaps.',
        description: 'The poollet of {{ $labels.kind }} pool {{ $labels.pool }} changed its Ready condition {{ $value | humanize }} times in 15 minutes, for 15 minutes.',
      },
    ],
  },
  {
    name: 'ironpool-poollet',
    rules: [
      {
        alert: 'IronpoolPoolletLeaseRenewalsFailing',
        expr: `sum by (namespace, pool) (rate(ironpool_poollet_lease_renew_failures_total{${p}}[5m])) > 0`,
        for: '10m',
        severity: 'warning',
        summary: 'The poollet of pool {{ $labels.pool }} fails to renew its Lease.',
        description: 'For 10 minutes the poollet of pool {{ $labels.pool }} (namespace {{ $labels.namespace }}) has failed Lease renewals ({{ $value | printf "%.2f" }} a second). Once its Lease is silent for a grace period the controller marks the pool Ready=Unknown.',
      },
      {
        alert: 'IronpoolPoolletRuntimeProbeFailing',
        expr: `sum by (namespace, pool, kind) (rate(ironpool_poollet_probe_failures_total{${p}}[5m])) / sum by (namespace, pool, kind) (rate(ironpool_poollet_probe_duration_seconds_count{${p}}[5m])) > 0.5`,
        for: '5m',
        severity: 'warning',
        summary: 'The IRI runtime of {{ $labels.kind }} pool {{ $labels.pool }} fails its probes.',
        description: 'For 5 minutes more than half of the poollet\'s probes of the IRI runtime of {{ $labels.kind }} pool {{ $labels.pool }} have failed or missed their deadline ({{ $value | humanizePercentage }}); the poollet reports the pool Ready=False.',
      },
      {
        alert: 'IronpoolPoolletCertificateExpiration',
        expr: `min by (namespace, pool) (ironpool_poollet_certificate_expiration_timestamp_seconds{${p}}) - time() < ${7 * DAY}`,
        for: '0m',
        severity: 'warning',
        summary: 'The client certificate of the poollet of pool {{ $labels.pool }} expires within 7 days.',
        description: 'The client certificate the poollet of pool {{ $labels.pool }} (namespace {{ $labels.namespace }}) authenticates with expires in {{ $value | humanizeDuration }}.',
      },
      {
        alert: 'IronpoolPoolletCertificateExpiration',
        expr: `min by (namespace, pool) (ironpool_poollet_certificate_expiration_timestamp_seconds{${p}}) - time() < ${DAY}`,
        for: '0m',
        severity: 'critical',
        summary: 'The client certificate of the poollet of pool {{ $labels.pool }} expires within a day.',
        description: 'The client certificate the poollet of pool {{ $labels.pool }} (namespace {{ $labels.namespace }}) authenticates with expires in {{ $value | humanizeDuration }}; then the API server refuses it and the pool goes Ready=Unknown.',
      },
      {
        alert: 'IronpoolPoolletCertificateRotationFailing',
        expr: `sum by (namespace, pool) (increase(ironpool_poollet_certificate_rotation_failures_total{${p}}[5m])) > 0`,
        for: '15m',
        severity: 'warning',
        summary: 'The poollet of pool {{ $labels.pool }} fails to renew its client certificate.',
        description: 'For 15 minutes the poollet of pool {{ $labels.pool }} (namespace {{ $labels.namespace }}) has failed to renew its client certificate; it keeps using the current one until it expires.',
      },
    ],
  },
]

export const ALERT_RULES: readonly AlertRule[] = ALERT_GROUPS.flatMap((group) => group.rules)

/** The section of docs/runbooks.md of an alert: a heading `## <alert>`, whose GitHub anchor is its lower-cased name. */
export function runbookAnchor(alert: string): string {
  return alert.toLowerCase()
}

export function runbookUrl(alert: string): string {
  return `${RUNBOOK_BASE}#${runbookAnchor(alert)}`
}

/** A rule as Prometheus reads it (a rule file's group entry, and a PrometheusRule's spec.groups). */
export function prometheusRule(rule: AlertRule): Record<string, unknown> {
  return {
    alert: rule.alert,
    expr: rule.expr,
    ...(rule.for === '0m' ? {} : {for: rule.for}),
    labels: {severity: rule.severity},
    annotations: {summary: rule.summary, description: rule.description, runbook_url: runbookUrl(rule.alert)},
  }
}

/** The `groups:` of a Prometheus rule file (promtool reads it; the PrometheusRule's spec holds the same). */
export function ruleGroups(): {groups: Array<{name: string; rules: Array<Record<string, unknown>>}>} {
  return {groups: ALERT_GROUPS.map((group) => ({name: group.name, rules: group.rules.map(prometheusRule)}))}
}
