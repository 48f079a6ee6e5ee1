import {Command, Flags} from '@oclif/core'
import {randomUUID} from 'node:crypto'
import {runPoollet} from '../app/poollet.ts'
import {failUsage, kubeconfigFlag, loggingFlags, bindAddressFlag, withEnv} from '../cli/flags.ts'
import {kubeConfigOrUsageError, runUntilSignalled} from '../cli/long-running.ts'
import {defaultHolderIdentity, POOL_KIND_NAMES, POOLLET_DEFAULTS, validatePoolletOptions, formatDuration} from '../core/index.ts'
import {discoverRuntimeEndpoint} from '../iri/index.ts'
import {createLogger} from '../observe/logger.ts'

// Durations are read as text and validated together in the core, so that every bad value (and every
// rule between two of them) is reported at once.
const duration = (description: string, defaultMs: number) => Flags.string({description, default: formatDuration(defaultMs), helpValue: '<duration>'})

export default class Poollet extends Command {
  static override summary = "Keep one pool's Lease renewed and its Ready condition true to its IRI runtime."
  static override description = `Every --heartbeat-interval the poollet probes the pool's IRI runtime (gRPC) with a deadline of --heartbeat-status-timeout, renews the pool's Lease whatever the probe said, and writes the pool's Ready condition when its meaning changed: True/HeartbeatReceived, or False/RuntimeUnreachable with the probe's error. Every flag can also be set by an IRONPOOL_<FLAG> environment variable.`
  static override examples = [
    '<%= config.bin %> poollet --pool-name=p1',
    '<%= config.bin %> poollet --pool-name=v1 --kind=volume --runtime-endpoint=unix:///var/run/iri-volumebroker.sock',
  ]

  static override flags = withEnv({
    'pool-name': Flags.string({description: 'Name of the pool (and of its Lease).', required: true}),
    kind: Flags.string({description: `Pool kind: ${POOL_KIND_NAMES.join(', ')}.`, default: 'machine'}),
    'runtime-endpoint': Flags.string({description: "The IRI runtime's endpoint (unix:///path). Default: $IRI_<KIND>_RUNTIME_ENDPOINT, then the well-known sockets."}),
    'runtime-socket-discovery-timeout': duration('How long to wait for a well-known runtime socket to appear.', POOLLET_DEFAULTS.runtimeDiscoveryTimeoutMs),
    'heartbeat-interval': duration('Time between heartbeats; > 0.', POOLLET_DEFAULTS.heartbeatIntervalMs),
    'heartbeat-lease-duration': duration("The Lease's leaseDurationSeconds; > --heartbeat-interval.", POOLLET_DEFAULTS.heartbeatLeaseDurationMs),
    'heartbeat-status-timeout': duration('Deadline of each runtime probe; > 0 and < --heartbeat-interval.', POOLLET_DEFAULTS.heartbeatStatusTimeoutMs),
    'holder-identity': Flags.string({description: 'Holder identity written to the Lease. Default: <pool-name>_<random uuid>, fixed for the process.'}),
    kubeconfig: kubeconfigFlag(),
    'metrics-bind-address': bindAddressFlag({description: 'Address of /metrics, e.g. :9090; 0 turns it off.', default: '0'}),
    ...loggingFlags(),
  })

  async run(): Promise<void> {
    const {flags} = await this.parse(Poollet)
    const validation = validatePoolletOptions({
      kind: flags.kind,
      poolName: flags['pool-name'],
      heartbeatInterval: flags['heartbeat-interval'],
      heartbeatLeaseDuration: flags['heartbeat-lease-duration'],
      heartbeatStatusTimeout: flags['heartbeat-status-timeout'],
      runtimeDiscoveryTimeout: flags['runtime-socket-discovery-timeout'],
    })
    if (!validation.ok) failUsage(this, validation.errors)
    const options = validation.options

    const kubeConfig = kubeConfigOrUsageError(this, flags.kubeconfig)
    const logger = createLogger({level: flags['log-level'], format: flags['log-format']}).child({kind: options.kind.name, pool: options.poolName})
    await runUntilSignalled(this, logger, async (signal) => {
      const runtimeEndpoint = await discoverRuntimeEndpoint({
        kind: options.kind,
        flag: flags['runtime-endpoint'],
        timeoutMs: options.runtimeDiscoveryTimeoutMs,
        signal,
      })
      const holderIdentity = flags['holder-identity'] ?? defaultHolderIdentity(options.poolName, randomUUID())
      await runPoollet({options, kubeConfig, runtimeEndpoint, holderIdentity, metricsAddress: flags['metrics-bind-address'], logger}, signal)
    })
  }
}
