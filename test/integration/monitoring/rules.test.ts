/**
 * promtool on ironpool's alerts: `check rules` on the rule groups deploy/monitoring's PrometheusRule
 * holds, and `test rules` on every case of test/support/alert-cases.ts (each alert firing with exact
 * labels and annotations, and not firing).
 */
import {expect} from 'chai'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {stringify} from 'yaml'
import {ruleGroups} from '../../../src/deploy/monitoring/alerts.ts'
import {ALERT_CASES, promtoolTests} from '../../support/alert-cases.ts'
import {PROMTOOL_BUILD_TIMEOUT_MS, promtool, runPromtool} from '../../support/promtool.ts'

describe('monitoring: promtool on the alerting rules', function () {
  this.timeout(60_000)
  let dir: string

  before(async function () {
    this.timeout(PROMTOOL_BUILD_TIMEOUT_MS)
    await promtool()
    dir = await mkdtemp(path.join(tmpdir(), 'ironpool-rules-'))
    await writeFile(path.join(dir, 'rules.yaml'), stringify(ruleGroups()))
    await writeFile(path.join(dir, 'tests.yaml'), stringify(promtoolTests('rules.yaml')))
  })

  after(async () => {
    if (dir) await rm(dir, {recursive: true, force: true})
  })

  it('promtool check rules: every rule valid, none missing', async () => {
    const result = await runPromtool(['check', 'rules', 'rules.yaml'], {cwd: dir})
    expect(result.code, result.stdout + result.stderr).to.equal(0)
    const rules = ruleGroups().groups.flatMap((g) => g.rules).length
    expect(result.stdout).to.include(`SUCCESS: ${rules} rules found`)
  })

  it(`promtool test rules: all ${ALERT_CASES.length} cases pass`, async () => {
    const result = await runPromtool(['test', 'rules', 'tests.yaml'], {cwd: dir})
    expect(result.code, result.stdout + result.stderr).to.equal(0)
    expect(result.stdout).to.include('SUCCESS')
  })
})
