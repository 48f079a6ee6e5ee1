/**
 * A lint of PromQL that ironpool ships (the dashboard's panels, the alerts): each expression parses
 * (lezer-promql, the grammar of Prometheus' own UI), and every metric it names is one ironpool exports,
 * taken from the code's registries: the controller's and the poollet's, created here as the processes
 * create them. Prometheus' own `up` is allowed where a caller says so.
 */
import {parser} from '@prometheus-io/lezer-promql'
import {POOL_KIND_NAMES} from '../../src/core/pool-kinds.ts'
import {createControllerMetrics, createCsrApproverMetrics, createPoolletMetrics, createRegistry} from '../../src/observe/metrics.ts'

/** Every series name ironpool's processes export: histograms and summaries as their _bucket/_sum/_count. */
export async function exportedMetricNames(): Promise<Set<string>> {
  const controller = createRegistry()
  createControllerMetrics(controller, POOL_KIND_NAMES)
  // As a controller that approves poollets' CSRs (--approve-poollet-csrs).
  createCsrApproverMetrics(controller)
  const poollet = createRegistry()
  // As a poollet that authenticates with a client certificate: the one that exports every poollet metric.
  createPoolletMetrics(poollet, 'machine', {certificateNotAfter: () => 0})
  const names = new Set<string>()
  for (const registry of [controller, poollet]) {
    for (const metric of await registry.getMetricsAsJSON()) {
      const type = String(metric.type)
      if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix)
      else if (type === 'summary') for (const suffix of ['', '_sum', '_count']) names.add(metric.name + suffix)
      else names.add(metric.name)
    }
  }
  return names
}

/** The metric names an expression selects (by name or by a `__name__=` matcher); throws if it does not parse. */
export function selectedMetrics(expr: string): string[] {
  const tree = parser.parse(expr)
  const names: string[] = []
  let error: number | undefined
  tree.iterate({
    enter(node) {
      if (node.type.isError && error === undefined) error = node.from
      if (node.name === 'VectorSelector') {
        const identifier = node.node.getChild('Identifier')
        if (identifier !== null) names.push(expr.slice(identifier.from, identifier.to))
      }
      if (node.name === 'UnquotedLabelMatcher') {
        const text = expr.slice(node.from, node.to)
        const match = /^__name__\s*=\s*"([^"]*)"$/.exec(text)
        if (match?.[1]) names.push(match[1])
      }
    },
  })
  if (error !== undefined) throw new Error(`does not parse at ${error}: ${expr.slice(0, error)} <here> ${expr.slice(error)}`)
  return names
}

/** Findings for one expression: a parse error, or each name that ironpool does not export. */
export function lintExpression(where: string, expr: string, exported: ReadonlySet<string>, allowed: readonly string[] = []): string[] {
  let names: string[]
  try {
    names = selectedMetrics(expr)
  } catch (error) {
    return [`${where}: ${(error as Error).message}`]
  }
  if (names.length === 0) return [`${where}: selects no metric: ${expr}`]
  return names.filter((name) => !exported.has(name) && !allowed.includes(name)).map((name) => `${where}: ${name} is not a metric ironpool exports`)
}
