/** The controller's flag rules not covered beside the dry run's: --grace-period, --kinds, --max-unhealthy, an empty --zone-label, leader election off. */
import {expect} from 'chai'
import {validateControllerOptions, type ControllerInput} from '../../../../src/core/lifecycle/controller-options.ts'
import {POOL_KINDS} from '../../../../src/core/pool-kinds.ts'

const input = (over: Partial<ControllerInput> = {}): ControllerInput => ({
  gracePeriodMs: 50_000,
  leaderElect: true,
  leaderElectionNamespace: 'ironpool-system',
  leaderElection: {leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000},
  ...over,
})

describe('controller options: the flags', () => {
  it('--grace-period must be > 0: 0 and a negative one are refused, naming the flag and the value; 1 ms is taken', () => {
    expect(validateControllerOptions(input({gracePeriodMs: 0}))).to.deep.equal({ok: false, errors: ['--grace-period must be > 0 (got 0s)']})
    expect(validateControllerOptions(input({gracePeriodMs: -1_500}))).to.deep.equal({ok: false, errors: ['--grace-period must be > 0 (got -1.5s)']})
    const taken = validateControllerOptions(input({gracePeriodMs: 1}))
    expect(taken.ok && taken.options.gracePeriodMs).to.equal(1)
  })

  it('--kinds: the kinds named, trimmed and each once, in the order given; none given: discovered (undefined)', () => {
    const given = validateControllerOptions(input({kinds: ' volume,machine ,volume'}))
    expect(given.ok && given.options.kinds).to.deep.equal([POOL_KINDS.volume, POOL_KINDS.machine])
    const all = validateControllerOptions(input())
    expect(all.ok && 'kinds' in all.options && all.options.kinds).to.equal(undefined)
  })

  it('--kinds naming no kind, or kinds that are none, is refused with the valid kinds', () => {
    expect(validateControllerOptions(input({kinds: ' , '}))).to.deep.equal({ok: false, errors: ['--kinds must name at least one kind of: machine, volume, bucket']})
    expect(validateControllerOptions(input({kinds: 'machine,disk,tape'}))).to.deep.equal({ok: false, errors: ['--kinds: "disk", "tape" not a pool kind; valid kinds: machine, volume, bucket']})
  })

  it('--max-unhealthy: a count is taken, empty is off, text is refused with the flag’s rule', () => {
    const count = validateControllerOptions(input({maxUnhealthy: '10'}))
    expect(count.ok && count.options.maxUnhealthy).to.deep.equal({kind: 'count', count: 10})
    const off = validateControllerOptions(input({maxUnhealthy: ''}))
    expect(off.ok && off.options.maxUnhealthy).to.equal(undefined)
    expect(validateControllerOptions(input({maxUnhealthy: 'ten'}))).to.deep.equal({
      ok: false,
      errors: ['--max-unhealthy must be a whole number of pools (e.g. 10) or a percentage from 0% to 100% (e.g. 30%); got "ten"'],
    })
  })

  it('every error is returned at once, in the order of the flags', () => {
    const result = validateControllerOptions(input({gracePeriodMs: 0, kinds: 'disk', maxUnhealthy: 'ten'}))
    expect(result.ok === false && result.errors.map((e) => e.split(' ')[0])).to.deep.equal(['--grace-period', '--kinds:', '--max-unhealthy'])
  })

  it('an empty --zone-label list is the defaults', () => {
    const result = validateControllerOptions(input({zoneLabels: []}))
    expect(result.ok && result.options.zoneLabels).to.deep.equal(['topology.ironcore.dev/zone', 'topology.kubernetes.io/zone'])
  })

  it('without --leader-elect the election settings are neither checked nor kept', () => {
    const result = validateControllerOptions(input({leaderElect: false, leaderElectionNamespace: 'Bad_NS'}))
    expect(result.ok).to.equal(true)
    expect(result.ok && result.options.leaderElection).to.equal(undefined)
  })
})
