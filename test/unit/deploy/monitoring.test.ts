/**
 * deploy/monitoring, checked without a cluster: the dashboard's lint (every expression parses, every
 * metric it names is exported by ironpool's registries, every panel has a unit and a description; 0
 * findings), the alerts' (parse, metrics, a runbook section each), the coverage of their promtool cases,
 * and the Component's shape (off by default).
 */
import {expect} from 'chai'
import {readFile} from 'node:fs/promises'
import {parse, parseAllDocuments} from 'yaml'
import {ALERT_RULES, runbookAnchor, RUNBOOK_BASE} from '../../../src/deploy/monitoring/alerts.ts'
import {dashboard} from '../../../src/deploy/monitoring/dashboard.ts'
import {DASHBOARD_FILE} from '../../../src/deploy/monitoring/monitoring.ts'
import {renderDeployFiles} from '../../../src/deploy/render-manifests.ts'
import {ALERT_CASES, coverageFindings} from '../../support/alert-cases.ts'
import {exportedMetricNames, lintExpression} from '../../support/promql-lint.ts'

interface Panel {
  type: string
  title: string
  description?: string
  fieldConfig?: {defaults?: {unit?: string}}
  targets?: Array<{expr: string}>
}

/** The dashboard lint: findings, one line each; [] when clean. */
export async function dashboardFindings(model: {panels: Panel[]}): Promise<string[]> {
  const exported = await exportedMetricNames()
  const findings: string[] = []
  for (const panel of model.panels.filter((p) => p.type !== 'row')) {
    const where = `panel "${panel.title}"`
    if (!panel.fieldConfig?.defaults?.unit) findings.push(`${where}: no unit`)
    if (!panel.description?.trim()) findings.push(`${where}: no description`)
    if (!panel.targets?.length) findings.push(`${where}: no query`)
    for (const target of panel.targets ?? []) findings.push(...lintExpression(where, target.expr, exported))
  }
  return findings
}

describe('deploy/monitoring', () => {
  const committedDashboard = () => {
    const [configMap] = parseAllDocuments(renderDeployFiles().get('monitoring/dashboard.yaml') ?? '').map((d) => d.toJS() as {data: Record<string, string>})
    return JSON.parse(configMap?.data[DASHBOARD_FILE] ?? '{}') as {panels: Panel[]}
  }

  it('the dashboard lint finds nothing in the committed dashboard', async () => {
    const model = committedDashboard()
    expect(model.panels.filter((p) => p.type !== 'row')).to.have.length.above(15)
    expect(await dashboardFindings(model)).to.deep.equal([])
  })

  it('the dashboard lint names a misspelt metric, a broken expression, a missing unit and description', async () => {
    const model = structuredClone(dashboard()) as unknown as {panels: Panel[]}
    const panels = model.panels.filter((p) => p.type !== 'row')
    const [first, second, third] = panels as [Panel, Panel, Panel]
    first.targets = [{expr: 'max by (kind) (ironpool_controller_pool{job="ironpool-controller"})'}]
    second.targets = [{expr: 'sum(rate(ironpool_controller_pools_marked_unknown_total[5m])'}]
    delete third.fieldConfig
    third.description = ''
    const findings = await dashboardFindings(model)
    expect(findings).to.have.length(4)
    expect(findings[0]).to.equal(`panel "${first.title}": ironpool_controller_pool is not a metric ironpool exports`)
    expect(findings[1]).to.match(new RegExp(`^panel "${second.title}": does not parse`))
    expect(findings.slice(2)).to.deep.equal([`panel "${third.title}": no unit`, `panel "${third.title}": no description`])
  })

  it('every alert parses and names only metrics ironpool exports (and Prometheus\' up)', async () => {
    const exported = await exportedMetricNames()
    expect(ALERT_RULES.flatMap((rule) => lintExpression(rule.alert, rule.expr, exported, ['up']))).to.deep.equal([])
  })

  it('every alert has a summary, a description and a runbook_url to its own section of docs/runbooks.md', async () => {
    const runbooks = await readFile(new URL('../../../docs/runbooks.md', import.meta.url), 'utf8')
    const sections = new Set([...runbooks.matchAll(/^## (\S+)$/gm)].map((m) => runbookAnchor(m[1] ?? '')))
    const rule = parse(renderDeployFiles().get('monitoring/prometheus-rule.yaml') ?? '') as {spec: {groups: Array<{rules: Array<{alert: string; annotations: Record<string, string>}>}>}}
    const rules = rule.spec.groups.flatMap((g) => g.rules)
    expect(rules).to.have.length(ALERT_RULES.length)
    for (const r of rules) {
      expect(r.annotations.summary, r.alert).to.be.a('string').and.not.empty
      expect(r.annotations.description, r.alert).to.be.a('string').and.not.empty
      const anchor = r.annotations.runbook_url?.replace(`${RUNBOOK_BASE}#`, '')
      expect(sections.has(anchor ?? ''), `${r.alert}: docs/runbooks.md has a section for ${anchor}`).to.equal(true)
    }
  })

  it('every alert has a promtool case in which it fires and one in which it does not', () => {
    expect(coverageFindings()).to.deep.equal([])
  })

  it('the coverage check names the rule a case was taken from, both ways', () => {
    const without = (name: string) => ALERT_CASES.filter((c) => c.name !== name)
    expect(coverageFindings(without('no controller answers a scrape for 5 minutes'))).to.deep.equal(['IronpoolControllerDown (critical): no case in which it fires'])
    expect(coverageFindings(without('a client certificate with 3 days left: the warning, not the critical'))).to.deep.equal([])
    expect(coverageFindings(without('a client certificate with 30 days left').filter((c) => !c.name.includes('3 days')))).to.deep.equal([
      'IronpoolPoolletCertificateExpiration (warning): no case in which it does not fire',
      'IronpoolPoolletCertificateExpiration (critical): no case in which it does not fire',
    ])
  })

  it('is a kustomize Component that deploy/default leaves out, with the scrape RBAC, PodMonitors (the controller over HTTPS with a bearer token), a PrometheusRule and a sidecar-labelled dashboard', () => {
    const files = renderDeployFiles()
    const kustomization = parse(files.get('monitoring/kustomization.yaml') ?? '') as {kind: string; resources: string[]}
    expect(kustomization.kind).to.equal('Component')
    expect(kustomization.resources).to.have.members(['metrics-reader-rbac.yaml', 'pod-monitors.yaml', 'prometheus-rule.yaml', 'dashboard.yaml'])
    const rbac = parseAllDocuments(files.get('monitoring/metrics-reader-rbac.yaml') ?? '').map((d) => d.toJS() as {kind: string; metadata: {name: string}; rules?: unknown; subjects?: unknown})
    expect(rbac.map((o) => `${o.kind}/${o.metadata.name}`)).to.deep.equal(['ClusterRole/ironpool-metrics-reader', 'ServiceAccount/ironpool-prometheus', 'Secret/ironpool-prometheus-token', 'ClusterRoleBinding/ironpool-metrics-reader'])
    expect(rbac[0]?.rules).to.deep.equal([{nonResourceURLs: ['/metrics'], verbs: ['get']}])
    expect(JSON.stringify(parse(files.get('default/kustomization.yaml') ?? ''))).to.not.include('monitoring')
    const monitors = parseAllDocuments(files.get('monitoring/pod-monitors.yaml') ?? '').map((d) => d.toJS() as {kind: string; metadata: {name: string}})
    expect(monitors.map((m) => `${m.kind}/${m.metadata.name}`)).to.deep.equal(['PodMonitor/ironpool-controller', 'PodMonitor/ironpool-poollets'])
    const controller = (monitors[0] as unknown as {spec: {podMetricsEndpoints: Array<Record<string, unknown>>}}).spec.podMetricsEndpoints[0]
    expect(controller).to.deep.include({scheme: 'https', tlsConfig: {insecureSkipVerify: true}, authorization: {type: 'Bearer', credentials: {name: 'ironpool-prometheus-token', key: 'token'}}})
    const [configMap] = parseAllDocuments(files.get('monitoring/dashboard.yaml') ?? '').map((d) => d.toJS() as {metadata: {labels: Record<string, string>}})
    expect(configMap?.metadata.labels.grafana_dashboard).to.equal('1')
  })
})
