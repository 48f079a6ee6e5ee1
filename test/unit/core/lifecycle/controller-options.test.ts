/** The controller's flag rules: the dry run's own leader-election id (never the controller's), zone labels, the request rate. */
import {expect} from 'chai'
import {CONTROLLER_DEFAULTS, validateControllerOptions, type ControllerInput} from '../../../../src/core/lifecycle/controller-options.ts'

const input = (over: Partial<ControllerInput> = {}): ControllerInput => ({
  gracePeriodMs: 50_000,
  leaderElect: true,
  leaderElectionNamespace: 'ironpool-system',
  leaderElection: {leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000},
  ...over,
})

describe('controller options: the dry run', () => {
  it('a dry run elects its own leader by default; the controller keeps its id', () => {
    const dry = validateControllerOptions(input({dryRun: true}))
    const real = validateControllerOptions(input())
    expect(dry.ok && dry.options).to.deep.include({dryRun: true, leaderElection: {namespace: 'ironpool-system', id: 'ironpool-controller-dry-run', timings: input().leaderElection}})
    expect(real.ok && real.options.leaderElection?.id).to.equal(CONTROLLER_DEFAULTS.leaderElectionId)
    expect(real.ok && real.options.dryRun).to.equal(false)
  })

  it("refuses a dry run given the controller's leader-election id, naming the flag and the rule", () => {
    const result = validateControllerOptions(input({dryRun: true, leaderElectionId: 'ironpool-controller'}))
    expect(result).to.deep.equal({
      ok: false,
      errors: ["--leader-election-id must differ from the controller's (ironpool-controller) with --dry-run: a dry run elects its own leader (default ironpool-controller-dry-run)"],
    })
    expect(validateControllerOptions(input({dryRun: true, leaderElectionId: 'trial-2'})).ok).to.equal(true)
  })

  it('--zone-label: the defaults, or the labels given; a value that is no label key is refused, naming the flag and the rule', () => {
    const defaults = validateControllerOptions(input())
    expect(defaults.ok && defaults.options.zoneLabels).to.deep.equal(['topology.ironcore.dev/zone', 'topology.kubernetes.io/zone'])
    const given = validateControllerOptions(input({zoneLabels: ['example.com/rack', 'zone']}))
    expect(given.ok && given.options.zoneLabels).to.deep.equal(['example.com/rack', 'zone'])
    expect(validateControllerOptions(input({zoneLabels: ['bad label']}))).to.deep.equal({
      ok: false,
      errors: [`--zone-label "bad label" is not a label key: [prefix/]name, the name at most 63 characters of letters, digits, '-', '_' and '.', beginning and ending with a letter or digit`],
    })
  })

  it('--qps and --burst: the defaults (100, 200, 100 in flight), or the rate given with a cap in flight of one second of it', () => {
    const defaults = validateControllerOptions(input())
    expect(defaults.ok && defaults.options.requestLimits).to.deep.equal({qps: 100, burst: 200, concurrency: 100})
    const raised = validateControllerOptions(input({qps: '300', burst: 600}))
    expect(raised.ok && raised.options.requestLimits).to.deep.equal({qps: 300, burst: 600, concurrency: 300})
    // Below the default rate the cap stays the default's: a slow answer still does not pace the queue.
    const lowered = validateControllerOptions(input({qps: '2.5', burst: 1}))
    expect(lowered.ok && lowered.options.requestLimits).to.deep.equal({qps: 2.5, burst: 1, concurrency: 100})
  })

  it('refuses a --qps that is no number > 0 and a --burst below 1, naming each flag and its rule, both at once', () => {
    expect(validateControllerOptions(input({qps: '0', burst: 0}))).to.deep.equal({
      ok: false,
      errors: ['--qps "0" must be a number > 0 (requests per second)', '--burst 0 must be an integer >= 1'],
    })
    expect(validateControllerOptions(input({qps: '1e3'}))).to.deep.equal({ok: false, errors: ['--qps "1e3" must be a number > 0 (requests per second)']})
  })
})
