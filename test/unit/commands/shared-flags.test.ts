import {Command, Flags, Parser} from '@oclif/core'
import {expect} from 'chai'
import {bindAddressFlag, durationFlag, envName, failUsage, kubeconfigFlag, loggingFlags, withEnv} from '../../../src/cli/flags.ts'

/** The exit code oclif's handler would use for an error: err.oclif.exit, else 1. */
function exitCodeOf(error: unknown): number {
  const oclif = (error as {oclif?: {exit?: number}}).oclif
  return oclif?.exit ?? 1
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a rejection')
}

const flags = withEnv({
  'pool-name': Flags.string({required: true, description: 'pool'}),
  'heartbeat-interval': durationFlag({description: 'interval', default: 10_000}),
  'status-timeout': durationFlag({description: 'timeout'}),
  'metrics-bind-address': bindAddressFlag({description: 'metrics', default: ':8080'}),
  'leader-elect': Flags.boolean({description: 'elect'}),
  kubeconfig: kubeconfigFlag(),
  ...loggingFlags(),
})

const parse = (argv: string[]) => Parser.parse(argv, {flags, strict: true})

/** A real oclif command with these flags, so exit codes are the ones `ironpool` would use. */
class ProbeCommand extends Command {
  static override flags = flags
  async run(): Promise<unknown> {
    const {flags: parsed} = await this.parse(ProbeCommand)
    if (parsed['pool-name'] === 'invalid') failUsage(this, ['--a must be > 0 (got 0s)', '--b "x" is not a pool kind'])
    return parsed
  }
}

describe('shared flags', () => {
  const saved = {...process.env}
  afterEach(() => {
    for (const key of Object.keys(process.env)) if (key.startsWith('IRONPOOL_') && !(key in saved)) delete process.env[key]
  })

  describe('envName', () => {
    const cases: Array<[string, string]> = [
      ['heartbeat-interval', 'IRONPOOL_HEARTBEAT_INTERVAL'],
      ['kubeconfig', 'IRONPOOL_KUBECONFIG'],
      ['health-probe-bind-address', 'IRONPOOL_HEALTH_PROBE_BIND_ADDRESS'],
      ['log-level', 'IRONPOOL_LOG_LEVEL'],
    ]
    for (const [flag, env] of cases) it(`--${flag} falls back to ${env}`, () => expect(envName(flag)).to.equal(env))
  })

  it('withEnv gives every flag its IRONPOOL_ variable', () => {
    for (const [name, flag] of Object.entries(flags)) expect(flag.env, name).to.equal(envName(name))
  })

  it('withEnv refuses a flag that names another variable', () => {
    expect(() => withEnv({'pool-name': Flags.string({env: 'POOL'})})).to.throw('flag --pool-name has env POOL; ironpool flags use IRONPOOL_POOL_NAME')
  })

  describe('duration flag', () => {
    const cases: Array<[string, number]> = [['10s', 10_000], ['1m30s', 90_000], ['500ms', 500], ['0', 0]]
    for (const [text, ms] of cases) {
      it(`reads ${text} as ${ms} ms`, async () => {
        const {flags: parsed} = await parse(['--pool-name', 'p', '--heartbeat-interval', text])
        expect(parsed['heartbeat-interval']).to.equal(ms)
      })
    }

    it('takes its default in ms and shows it as a duration in help', async () => {
      const {flags: parsed} = await parse(['--pool-name', 'p'])
      expect(parsed['heartbeat-interval']).to.equal(10_000)
      expect(parsed['status-timeout']).to.equal(undefined)
      const defaultHelp = flags['heartbeat-interval'].defaultHelp as () => Promise<string>
      expect(await defaultHelp()).to.equal('10s')
    })

    it('refuses a bad value naming the flag, the value and the reason, exit 2', async () => {
      const error = await rejection(parse(['--pool-name', 'p', '--heartbeat-interval', '10x']))
      expect(error.message).to.include('--heartbeat-interval "10x" is not a duration (unknown unit "x" in duration "10x"); write e.g. 10s, 1m30s, 500ms')
      expect(exitCodeOf(error)).to.equal(2)
    })

    it('reads IRONPOOL_HEARTBEAT_INTERVAL when the flag is absent', async () => {
      process.env.IRONPOOL_HEARTBEAT_INTERVAL = '2s'
      const {flags: parsed} = await parse(['--pool-name', 'p'])
      expect(parsed['heartbeat-interval']).to.equal(2_000)
    })

    it('names the variable when its value is bad', async () => {
      process.env.IRONPOOL_HEARTBEAT_INTERVAL = 'soon'
      const error = await rejection(parse(['--pool-name', 'p']))
      expect(error.message).to.include('--heartbeat-interval (from IRONPOOL_HEARTBEAT_INTERVAL) "soon" is not a duration')
      expect(exitCodeOf(error)).to.equal(2)
    })
  })

  describe('bind address flag', () => {
    it('reads ":9090" as port 9090 on every interface', async () => {
      const {flags: parsed} = await parse(['--pool-name', 'p', '--metrics-bind-address', ':9090'])
      expect(parsed['metrics-bind-address']).to.deep.equal({host: undefined, port: 9090})
    })

    it('reads "0" as off, not as the default', async () => {
      const {flags: parsed} = await parse(['--pool-name', 'p', '--metrics-bind-address', '0'])
      expect(parsed['metrics-bind-address']).to.equal(undefined)
    })

    it('defaults to its parsed default', async () => {
      const {flags: parsed} = await parse(['--pool-name', 'p'])
      expect(parsed['metrics-bind-address']).to.deep.equal({host: undefined, port: 8080})
    })

    it('refuses a bad address naming the flag, exit 2', async () => {
      const error = await rejection(parse(['--pool-name', 'p', '--metrics-bind-address', '8080']))
      expect(error.message).to.include('--metrics-bind-address "8080" is not a bind address: missing ":" before the port (":8080"?)')
      expect(exitCodeOf(error)).to.equal(2)
    })
  })

  it('reads a boolean from its variable', async () => {
    process.env.IRONPOOL_LEADER_ELECT = 'true'
    const {flags: parsed} = await parse(['--pool-name', 'p'])
    expect(parsed['leader-elect']).to.equal(true)
  })

  it('offers the four log levels and three formats, defaulting to info and auto', async () => {
    expect(flags['log-level'].options).to.deep.equal(['debug', 'info', 'warn', 'error'])
    expect(flags['log-format'].options).to.deep.equal(['json', 'text', 'auto'])
    const {flags: parsed} = await parse(['--pool-name', 'p'])
    expect([parsed['log-level'], parsed['log-format']]).to.deep.equal(['info', 'auto'])
  })

  // oclif 5's own parse errors are CLIErrors whose exit code defaults to 2; these pin that down.
  describe('oclif parse errors exit 2 through a real command', () => {
    const cases: Array<[string, string[], string]> = [
      ['an unknown flag', ['--pool-name', 'p', '--bogus'], 'Nonexistent flag: --bogus'],
      ['a value outside the options', ['--pool-name', 'p', '--log-level', 'loud'], 'Expected --log-level=loud to be one of: debug, info, warn, error'],
      ['a missing required flag', [], 'Missing required flag pool-name'],
      ['a bad duration', ['--pool-name', 'p', '--heartbeat-interval', '-1s'], '--heartbeat-interval "-1s" is not a duration'],
    ]
    for (const [what, argv, message] of cases) {
      it(`${what}: exit 2, "${message}"`, async () => {
        const error = await rejection(ProbeCommand.run(argv, import.meta.url))
        expect(error.message).to.include(message)
        expect(exitCodeOf(error)).to.equal(2)
      })
    }
  })

  it('failUsage reports every error, exit 2', async () => {
    const error = await rejection(ProbeCommand.run(['--pool-name', 'invalid'], import.meta.url))
    expect(error.message).to.equal('2 invalid flag values:\n  - --a must be > 0 (got 0s)\n  - --b "x" is not a pool kind\nSee more help with --help')
    expect(exitCodeOf(error)).to.equal(2)
  })
})
