import {expect} from 'chai'
import {POOL_KINDS} from '../../../../src/core/pool-kinds.ts'
import {POOLLET_DEFAULTS, validatePoolletOptions, type PoolletInput} from '../../../../src/core/heartbeat/poollet-options.ts'

const VALID: PoolletInput = {kind: 'machine', poolName: 'p1'}

function errorsOf(input: Partial<PoolletInput>): string[] {
  const result = validatePoolletOptions({...VALID, ...input})
  return result.ok ? [] : result.errors
}

describe('validatePoolletOptions', () => {
  it('fills the defaults: 10s interval, 40s lease, 5s status timeout, 20s discovery', () => {
    const result = validatePoolletOptions(VALID)
    expect(result).to.deep.equal({
      ok: true,
      options: {
        kind: POOL_KINDS.machine,
        poolName: 'p1',
        heartbeatIntervalMs: 10_000,
        heartbeatLeaseDurationMs: 40_000,
        heartbeatStatusTimeoutMs: 5_000,
        runtimeDiscoveryTimeoutMs: 20_000,
      },
    })
    expect(POOLLET_DEFAULTS).to.deep.equal({
      heartbeatIntervalMs: 10_000,
      heartbeatLeaseDurationMs: 40_000,
      heartbeatStatusTimeoutMs: 5_000,
      runtimeDiscoveryTimeoutMs: 20_000,
    })
  })

  it('reads durations as Go writes them', () => {
    const result = validatePoolletOptions({
      ...VALID,
      heartbeatInterval: '1m30s',
      heartbeatLeaseDuration: '6m',
      heartbeatStatusTimeout: '1500ms',
      runtimeDiscoveryTimeout: '1m',
    })
    expect(result.ok && result.options).to.include({
      heartbeatIntervalMs: 90_000,
      heartbeatLeaseDurationMs: 360_000,
      heartbeatStatusTimeoutMs: 1_500,
      runtimeDiscoveryTimeoutMs: 60_000,
    })
  })

  it('--heartbeat-interval must be > 0', () => {
    expect(errorsOf({heartbeatInterval: '0s'})).to.include('--heartbeat-interval must be > 0 (got 0s)')
  })

  it('--heartbeat-lease-duration must be greater than --heartbeat-interval', () => {
    expect(errorsOf({heartbeatInterval: '10s', heartbeatLeaseDuration: '10s'})).to.deep.equal([
      '--heartbeat-lease-duration (10s) must be greater than --heartbeat-interval (10s)',
    ])
    expect(errorsOf({heartbeatInterval: '1m', heartbeatLeaseDuration: '40s'})).to.deep.equal([
      '--heartbeat-lease-duration (40s) must be greater than --heartbeat-interval (1m)',
    ])
  })

  it('--heartbeat-status-timeout must be > 0', () => {
    expect(errorsOf({heartbeatStatusTimeout: '0s'})).to.deep.equal([
      '--heartbeat-status-timeout must be > 0 and < --heartbeat-interval (got 0s, interval 10s)',
    ])
  })

  it('--heartbeat-status-timeout must be > 0, said without an interval that did not parse', () => {
    expect(errorsOf({heartbeatStatusTimeout: '0s', heartbeatInterval: 'soon'})).to.deep.equal([
      '--heartbeat-interval "soon" is not a duration (invalid number in duration "soon"); write e.g. 10s, 1m30s, 500ms',
      '--heartbeat-status-timeout must be > 0 and < --heartbeat-interval (got 0s)',
    ])
  })

  it('--heartbeat-status-timeout must be < --heartbeat-interval', () => {
    expect(errorsOf({heartbeatStatusTimeout: '10s'})).to.deep.equal([
      '--heartbeat-status-timeout must be > 0 and < --heartbeat-interval (got 10s, interval 10s)',
    ])
  })

  for (const [field, flag] of [
    ['heartbeatInterval', '--heartbeat-interval'],
    ['heartbeatLeaseDuration', '--heartbeat-lease-duration'],
    ['heartbeatStatusTimeout', '--heartbeat-status-timeout'],
    ['runtimeDiscoveryTimeout', '--runtime-socket-discovery-timeout'],
  ] as const) {
    it(`an unparsable ${flag} names the flag and the value, and nothing else`, () => {
      expect(errorsOf({[field]: '10'})).to.deep.equal([
        `${flag} "10" is not a duration (missing unit in duration "10"); write e.g. 10s, 1m30s, 500ms`,
      ])
    })
  }

  it('an unknown --kind lists the valid ones', () => {
    expect(errorsOf({kind: 'network'})).to.deep.equal(['--kind "network" is not a pool kind; valid kinds: machine, volume, bucket'])
  })

  for (const name of ['', 'P1', 'p_1', '-p1', 'p1-', 'p..1', 'a'.repeat(254)]) {
    it(`--pool-name ${JSON.stringify(name.length > 20 ? `${name.slice(0, 8)}…(${name.length})` : name)} must be a valid DNS subdomain name`, () => {
      const errors = errorsOf({poolName: name})
      expect(errors).to.have.length(1)
      expect(errors[0]).to.match(/^--pool-name ".*" must be a valid DNS subdomain name \(/)
    })
  }

  it('accepts DNS subdomain names with dots and dashes up to 253 characters', () => {
    for (const name of ['p1', 'pool-a.zone-1', '0', `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`]) {
      expect(errorsOf({poolName: name}), name).to.deep.equal([])
    }
  })

  it('returns every error at once instead of stopping at the first', () => {
    const errors = errorsOf({kind: 'x', poolName: 'X', heartbeatInterval: '0s', heartbeatStatusTimeout: 'abc'})
    expect(errors).to.have.length(4)
  })
})
