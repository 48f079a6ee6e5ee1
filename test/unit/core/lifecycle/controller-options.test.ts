/** The controller's flag rules that concern the dry run: its own leader-election id, never the controller's. */
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
})
