/**
 * promtool unit tests of every alert of src/deploy/monitoring/alerts.ts, both ways: each rule (alert and severity)
 * has a case in which it fires, with its exact labels and annotations, and one in which it does not
 * (test/unit/deploy/monitoring.test.ts fails otherwise). Series are written as Prometheus would scrape
 * them through deploy/monitoring's PodMonitors (job, instance, namespace, pool), one sample a minute.
 *
 * Expected annotations are the rule's own templates with `{{ $labels.x }}` filled from the expected
 * labels and `{{ $value ... }}` from the case's `value`, the rendering stated by hand: promtool
 * compares them with what Prometheus' template engine renders.
 */
import {ALERT_RULES, CONTROLLER_JOB, POOLLET_JOB, runbookUrl, type Severity} from '../../src/deploy/monitoring/alerts.ts'

export interface ExpectedAlert {
  labels: Record<string, string>
  annotations: Record<string, string>
}

export interface AlertCase {
  /** What the case shows, as a sentence. */
  name: string
  alert: string
  series: ReadonlyArray<{series: string; values: string}>
  evalTime: string
  /** Exactly the alerts of that name firing at evalTime. */
  firing: readonly ExpectedAlert[]
}

/** One firing alert: labels (severity included) and the rule's annotations rendered for them. */
export function firing(alert: string, severity: Severity, labels: Record<string, string>, value = ''): ExpectedAlert {
  const rule = ALERT_RULES.find((r) => r.alert === alert && r.severity === severity)
  if (rule === undefined) throw new Error(`no rule ${alert} (${severity})`)
  const render = (template: string) =>
    template.replace(/\{\{\s*\$labels\.(\w+)\s*\}\}/g, (_m, name: string) => labels[name] ?? '').replace(/\{\{\s*\$value[^}]*\}\}/g, value)
  return {
    labels: {...labels, severity},
    annotations: {summary: render(rule.summary), description: render(rule.description), runbook_url: runbookUrl(alert)},
  }
}

const C = `job="${CONTROLLER_JOB}"`
const P = `job="${POOLLET_JOB}"`
const A = `${C}, instance="10.0.0.1:8080", namespace="ironpool-system", pod="ironpool-controller-a"`
const B = `${C}, instance="10.0.0.2:8080", namespace="ironpool-system", pod="ironpool-controller-b"`
const POOL = `${P}, instance="10.0.1.1:8080", namespace="pools", pod="machinepoollet-p1", pool="p1"`
const poolLabels = {namespace: 'pools', pool: 'p1'}

export const ALERT_CASES: readonly AlertCase[] = [
  {
    name: 'no controller answers a scrape for 5 minutes',
    alert: 'IronpoolControllerDown',
    series: [{series: `up{${A}}`, values: '1 1 0x10'}],
    evalTime: '8m',
    firing: [firing('IronpoolControllerDown', 'critical', {})],
  },
  {
    name: 'one replica of two is down: the controller is not',
    alert: 'IronpoolControllerDown',
    series: [
      {series: `up{${A}}`, values: '0x10'},
      {series: `up{${B}}`, values: '1x10'},
    ],
    evalTime: '8m',
    firing: [],
  },
  {
    name: 'a controller down for 3 minutes is pending, not firing (for: 5m)',
    alert: 'IronpoolControllerDown',
    series: [{series: `up{${A}}`, values: '1 0 0 0 1x6'}],
    evalTime: '3m',
    firing: [],
  },
  {
    name: 'two replicas up, neither leads',
    alert: 'IronpoolControllerNoLeader',
    series: [
      {series: `ironpool_controller_leader{${A}}`, values: '0x10'},
      {series: `ironpool_controller_leader{${B}}`, values: '0x10'},
    ],
    evalTime: '6m',
    firing: [firing('IronpoolControllerNoLeader', 'critical', {})],
  },
  {
    name: 'one replica leads',
    alert: 'IronpoolControllerNoLeader',
    series: [
      {series: `ironpool_controller_leader{${A}}`, values: '0x10'},
      {series: `ironpool_controller_leader{${B}}`, values: '1x10'},
    ],
    evalTime: '6m',
    firing: [],
  },
  {
    name: "the leading approver's CSR cache not whole for 12 minutes",
    alert: 'IronpoolCsrApproverBlind',
    series: [
      {series: `ironpool_controller_csr_cache_whole{${A}}`, values: '1 1 0x14'},
      {series: `ironpool_controller_leader{${A}}`, values: '1x16'},
      {series: `ironpool_controller_csr_cache_whole{${B}}`, values: '1x16'},
      {series: `ironpool_controller_leader{${B}}`, values: '0x16'},
    ],
    evalTime: '14m',
    firing: [firing('IronpoolCsrApproverBlind', 'critical', {})],
  },
  {
    name: "a standby's CSR cache not whole, the leader's whole; and not for 10 minutes yet",
    alert: 'IronpoolCsrApproverBlind',
    series: [
      {series: `ironpool_controller_csr_cache_whole{${A}}`, values: '1 1 1 1 1 1 1 1 1 1 1 1 0x4'},
      {series: `ironpool_controller_leader{${A}}`, values: '1x16'},
      {series: `ironpool_controller_csr_cache_whole{${B}}`, values: '0x16'},
      {series: `ironpool_controller_leader{${B}}`, values: '0x16'},
    ],
    evalTime: '15m',
    firing: [],
  },
  {
    name: 'the leader blind to machine pools for 4 minutes (api-unanswered)',
    alert: 'IronpoolControllerBlind',
    series: [
      {series: `ironpool_controller_view_blind{${A}, kind="machine", reason="api-unanswered"}`, values: '0 0 1x10'},
      {series: `ironpool_controller_view_blind{${A}, kind="machine", reason="paused"}`, values: '0x12'},
      {series: `ironpool_controller_leader{${A}}`, values: '1x12'},
    ],
    evalTime: '6m',
    firing: [firing('IronpoolControllerBlind', 'critical', {kind: 'machine', reason: 'api-unanswered'})],
  },
  {
    name: 'a blind standby, and a leader that sees',
    alert: 'IronpoolControllerBlind',
    series: [
      {series: `ironpool_controller_view_blind{${A}, kind="machine", reason="watch-gap"}`, values: '0x12'},
      {series: `ironpool_controller_leader{${A}}`, values: '1x12'},
      {series: `ironpool_controller_view_blind{${B}, kind="machine", reason="watch-gap"}`, values: '1x12'},
      {series: `ironpool_controller_leader{${B}}`, values: '0x12'},
    ],
    evalTime: '6m',
    firing: [],
  },
  {
    name: 'the leader blind for 2 minutes: pending, not firing (for: 3m)',
    alert: 'IronpoolControllerBlind',
    series: [
      {series: `ironpool_controller_view_blind{${A}, kind="machine", reason="paused"}`, values: '0 1 1 0x10'},
      {series: `ironpool_controller_leader{${A}}`, values: '1x12'},
    ],
    evalTime: '2m',
    firing: [],
  },
  {
    name: 'the volume breaker open for 6 minutes',
    alert: 'IronpoolControllerBreakerOpen',
    series: [
      {series: `ironpool_controller_breaker_open{${A}, kind="volume"}`, values: '1x10'},
      {series: `ironpool_controller_breaker_open{${A}, kind="machine"}`, values: '0x10'},
    ],
    evalTime: '6m',
    firing: [firing('IronpoolControllerBreakerOpen', 'critical', {kind: 'volume'})],
  },
  {
    name: 'every breaker closed',
    alert: 'IronpoolControllerBreakerOpen',
    series: [{series: `ironpool_controller_breaker_open{${A}, kind="volume"}`, values: '0x10'}],
    evalTime: '6m',
    firing: [],
  },
  {
    name: 'zone a of the machine pools held by its breaker',
    alert: 'IronpoolControllerZoneHeld',
    series: [
      {series: `ironpool_controller_zone_breaker_open{${A}, kind="machine", zone="a"}`, values: '1x10'},
      {series: `ironpool_controller_zone_breaker_open{${A}, kind="machine", zone="b"}`, values: '0x10'},
    ],
    evalTime: '6m',
    firing: [firing('IronpoolControllerZoneHeld', 'warning', {kind: 'machine', zone: 'a'})],
  },
  {
    name: 'a zone held for less than 5 minutes',
    alert: 'IronpoolControllerZoneHeld',
    series: [{series: `ironpool_controller_zone_breaker_open{${A}, kind="machine", zone="a"}`, values: '0 0 0 1 1 1 1 1'}],
    evalTime: '6m',
    firing: [],
  },
  {
    name: 'a machine pool overdue and unmarked, a minute more every minute',
    alert: 'IronpoolPoolsOverdue',
    series: [
      {series: `ironpool_controller_oldest_overdue_seconds{${A}, kind="machine"}`, values: '0 30 90 150 210 270 330'},
      {series: `ironpool_controller_breaker_open{${A}, kind="machine"}`, values: '0x6'},
    ],
    evalTime: '5m',
    firing: [firing('IronpoolPoolsOverdue', 'critical', {kind: 'machine'}, '4m 30s')],
  },
  {
    name: 'overdue while the breaker holds marks back: that is IronpoolControllerBreakerOpen',
    alert: 'IronpoolPoolsOverdue',
    series: [
      {series: `ironpool_controller_oldest_overdue_seconds{${A}, kind="machine"}`, values: '0 30 90 150 210 270 330'},
      {series: `ironpool_controller_breaker_open{${A}, kind="machine"}`, values: '1x6'},
    ],
    evalTime: '5m',
    firing: [],
  },
  {
    name: 'overdue by seconds only (a mark on its way)',
    alert: 'IronpoolPoolsOverdue',
    series: [
      {series: `ironpool_controller_oldest_overdue_seconds{${A}, kind="machine"}`, values: '2x10'},
      {series: `ironpool_controller_breaker_open{${A}, kind="machine"}`, values: '0x10'},
    ],
    evalTime: '8m',
    firing: [],
  },
  {
    name: 'Unknown writes failing six a minute for 15 minutes',
    alert: 'IronpoolUnknownWritesFailing',
    series: [{series: `ironpool_controller_unknown_write_failures_total{${A}, kind="machine"}`, values: '0+6x20'}],
    evalTime: '15m',
    firing: [firing('IronpoolUnknownWritesFailing', 'warning', {kind: 'machine'}, '0.10')],
  },
  {
    name: 'no Unknown write failed',
    alert: 'IronpoolUnknownWritesFailing',
    series: [{series: `ironpool_controller_unknown_write_failures_total{${A}, kind="machine"}`, values: '0x20'}],
    evalTime: '15m',
    firing: [],
  },
  {
    name: 'every mark lands 1-10 s late for half an hour',
    alert: 'IronpoolUnknownWritesSlow',
    series: [
      {series: `ironpool_controller_unknown_write_delay_seconds_bucket{${A}, le="1"}`, values: '0x30'},
      {series: `ironpool_controller_unknown_write_delay_seconds_bucket{${A}, le="10"}`, values: '0+10x30'},
      {series: `ironpool_controller_unknown_write_delay_seconds_bucket{${A}, le="+Inf"}`, values: '0+10x30'},
    ],
    evalTime: '30m',
    firing: [firing('IronpoolUnknownWritesSlow', 'warning', {}, '9.91s')],
  },
  {
    name: 'every mark lands within a second',
    alert: 'IronpoolUnknownWritesSlow',
    series: [
      {series: `ironpool_controller_unknown_write_delay_seconds_bucket{${A}, le="1"}`, values: '0+10x30'},
      {series: `ironpool_controller_unknown_write_delay_seconds_bucket{${A}, le="10"}`, values: '0+10x30'},
      {series: `ironpool_controller_unknown_write_delay_seconds_bucket{${A}, le="+Inf"}`, values: '0+10x30'},
    ],
    evalTime: '30m',
    firing: [],
  },
  {
    name: 'two machine pools Unknown for 16 minutes, seen by both replicas',
    alert: 'IronpoolPoolsNotReady',
    series: [
      {series: `ironpool_controller_pools{${A}, kind="machine", status="Unknown"}`, values: '2x20'},
      {series: `ironpool_controller_pools{${B}, kind="machine", status="Unknown"}`, values: '2x20'},
      {series: `ironpool_controller_pools{${A}, kind="machine", status="True"}`, values: '5x20'},
      {series: `ironpool_controller_pools{${A}, kind="volume", status="False"}`, values: '0x20'},
    ],
    evalTime: '16m',
    firing: [firing('IronpoolPoolsNotReady', 'warning', {kind: 'machine', status: 'Unknown'}, '2')],
  },
  {
    name: 'a volume pool False for 8 minutes: pending, not firing (for: 15m)',
    alert: 'IronpoolPoolsNotReady',
    series: [
      {series: `ironpool_controller_pools{${A}, kind="volume", status="False"}`, values: '0x5 1x10 0x5'},
      {series: `ironpool_controller_pools{${A}, kind="volume", status="True"}`, values: '3x20'},
    ],
    evalTime: '14m',
    firing: [],
  },
  {
    name: 'a pool whose Ready changes every minute',
    alert: 'IronpoolPoolReadyFlapping',
    series: [
      {series: `ironpool_poollet_ready_transitions_total{${POOL}, kind="machine", status="True"}`, values: '0+1x40'},
      {series: `ironpool_poollet_ready_transitions_total{${POOL}, kind="machine", status="False"}`, values: '0+1x40'},
    ],
    evalTime: '35m',
    firing: [firing('IronpoolPoolReadyFlapping', 'warning', {...poolLabels, kind: 'machine'}, '30')],
  },
  {
    name: 'a pool that went False and back once',
    alert: 'IronpoolPoolReadyFlapping',
    series: [
      {series: `ironpool_poollet_ready_transitions_total{${POOL}, kind="machine", status="True"}`, values: '1 1 2x40'},
      {series: `ironpool_poollet_ready_transitions_total{${POOL}, kind="machine", status="False"}`, values: '0 1 1x40'},
    ],
    evalTime: '35m',
    firing: [],
  },
  {
    name: 'a poollet failing every renewal for 15 minutes',
    alert: 'IronpoolPoolletLeaseRenewalsFailing',
    series: [{series: `ironpool_poollet_lease_renew_failures_total{${POOL}}`, values: '0+30x20'}],
    evalTime: '15m',
    firing: [firing('IronpoolPoolletLeaseRenewalsFailing', 'warning', poolLabels, '0.50')],
  },
  {
    name: 'a burst of failed renewals, over after a minute: pending while in the window, never firing (for: 10m)',
    alert: 'IronpoolPoolletLeaseRenewalsFailing',
    series: [{series: `ironpool_poollet_lease_renew_failures_total{${POOL}}`, values: '0 30 30x20'}],
    evalTime: '5m',
    firing: [],
  },
  {
    name: 'every runtime probe failing for 12 minutes',
    alert: 'IronpoolPoolletRuntimeProbeFailing',
    series: [
      {series: `ironpool_poollet_probe_failures_total{${POOL}, kind="machine"}`, values: '0+60x20'},
      {series: `ironpool_poollet_probe_duration_seconds_count{${POOL}, kind="machine"}`, values: '0+60x20'},
    ],
    evalTime: '12m',
    firing: [firing('IronpoolPoolletRuntimeProbeFailing', 'warning', {...poolLabels, kind: 'machine'}, '100%')],
  },
  {
    name: 'one runtime probe in ten failing',
    alert: 'IronpoolPoolletRuntimeProbeFailing',
    series: [
      {series: `ironpool_poollet_probe_failures_total{${POOL}, kind="machine"}`, values: '0+6x20'},
      {series: `ironpool_poollet_probe_duration_seconds_count{${POOL}, kind="machine"}`, values: '0+60x20'},
    ],
    evalTime: '12m',
    firing: [],
  },
  {
    name: 'a client certificate with 3 days left: the warning, not the critical',
    alert: 'IronpoolPoolletCertificateExpiration',
    series: [{series: `ironpool_poollet_certificate_expiration_timestamp_seconds{${POOL}}`, values: `${3 * 86_400 + 600}x10`}],
    evalTime: '10m',
    firing: [firing('IronpoolPoolletCertificateExpiration', 'warning', poolLabels, '3d 0h 0m 0s')],
  },
  {
    name: 'a client certificate with 12 hours left: both',
    alert: 'IronpoolPoolletCertificateExpiration',
    series: [{series: `ironpool_poollet_certificate_expiration_timestamp_seconds{${POOL}}`, values: `${12 * 3600 + 600}x10`}],
    evalTime: '10m',
    firing: [
      firing('IronpoolPoolletCertificateExpiration', 'warning', poolLabels, '12h 0m 0s'),
      firing('IronpoolPoolletCertificateExpiration', 'critical', poolLabels, '12h 0m 0s'),
    ],
  },
  {
    name: 'a client certificate with 30 days left',
    alert: 'IronpoolPoolletCertificateExpiration',
    series: [{series: `ironpool_poollet_certificate_expiration_timestamp_seconds{${POOL}}`, values: `${30 * 86_400}x10`}],
    evalTime: '10m',
    firing: [],
  },
  {
    name: 'a renewal failing every minute for 20 minutes',
    alert: 'IronpoolPoolletCertificateRotationFailing',
    series: [{series: `ironpool_poollet_certificate_rotation_failures_total{${POOL}}`, values: '0+1x30'}],
    evalTime: '20m',
    firing: [firing('IronpoolPoolletCertificateRotationFailing', 'warning', poolLabels)],
  },
  {
    name: 'one failed renewal, long ago, then none',
    alert: 'IronpoolPoolletCertificateRotationFailing',
    series: [{series: `ironpool_poollet_certificate_rotation_failures_total{${POOL}}`, values: '0 1 1x30'}],
    evalTime: '20m',
    firing: [],
  },
]

/** The cases as a promtool test file (rule_files relative to it). */
export function promtoolTests(ruleFile: string, cases: readonly AlertCase[] = ALERT_CASES): Record<string, unknown> {
  return {
    rule_files: [ruleFile],
    evaluation_interval: '1m',
    tests: cases.map((c) => ({
      name: c.name,
      interval: '1m',
      input_series: c.series,
      alert_rule_test: [{eval_time: c.evalTime, alertname: c.alert, exp_alerts: c.firing.map((a) => ({exp_labels: a.labels, exp_annotations: a.annotations}))}],
    })),
  }
}

/**
 * What the cases leave untested: each rule (alert and severity) needs a case in which it fires, with
 * its labels and all three annotations, and a case of its alert in which it does not.
 */
export function coverageFindings(cases: readonly AlertCase[] = ALERT_CASES): string[] {
  const findings: string[] = []
  for (const rule of ALERT_RULES) {
    const ofAlert = cases.filter((c) => c.alert === rule.alert)
    const fires = ofAlert.filter((c) => c.firing.some((a) => a.labels.severity === rule.severity))
    const quiet = ofAlert.filter((c) => !c.firing.some((a) => a.labels.severity === rule.severity))
    const id = `${rule.alert} (${rule.severity})`
    if (fires.length === 0) findings.push(`${id}: no case in which it fires`)
    if (quiet.length === 0) findings.push(`${id}: no case in which it does not fire`)
  }
  for (const c of cases) {
    for (const a of c.firing) {
      for (const key of ['summary', 'description', 'runbook_url']) if (!a.annotations[key]) findings.push(`${c.alert} in "${c.name}": expected annotation ${key} missing`)
      if (!a.labels.severity) findings.push(`${c.alert} in "${c.name}": expected labels lack severity`)
    }
    if (!ALERT_RULES.some((r) => r.alert === c.alert)) findings.push(`case "${c.name}" tests ${c.alert}, which is no alert`)
  }
  return findings
}
