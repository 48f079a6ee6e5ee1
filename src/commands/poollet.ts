import {Command, Flags} from '@oclif/core'
import {randomUUID} from 'node:crypto'
import {failUsage, loggingFlags, bindAddressFlag, withEnv} from '../cli/flags.ts'
import {
  defaultHolderIdentity,
  IDENTITY_DEFAULTS,
  POOL_KIND_NAMES,
  POOLLET_DEFAULTS,
  systemClock,
  validateIdentityOptions,
  validatePoolletOptions,
  formatDuration,
} from '../core/index.ts'

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
    kubeconfig: Flags.string({
      description:
        'Path to a kubeconfig. Default: in-cluster configuration, then $KUBECONFIG, then ~/.kube/config. With --bootstrap-kubeconfig or --rotate-certificates: where the issued kubeconfig is kept (mode 0600).',
    }),
    'kubeconfig-secret-name': Flags.string({description: 'Name of a Secret holding the kubeconfig (field kubeconfig), read and written with the in-cluster credentials; instead of --kubeconfig.'}),
    'kubeconfig-secret-namespace': Flags.string({description: "Namespace of --kubeconfig-secret-name. Default: $POD_NAMESPACE, then the ServiceAccount's namespace, then default."}),
    'bootstrap-kubeconfig': Flags.string({
      description: `Path to a bootstrap kubeconfig (e.g. a bootstrap token in group system:bootstrappers:<group>:<kind>pools): when the kubeconfig is missing or its certificate (about to be) expired, request a client certificate with a CSR and keep the issued kubeconfig.`,
    }),
    'rotate-certificates': Flags.boolean({description: 'Renew the client certificate at 70–90 % of its lifetime and switch to it without a restart.', default: false}),
    'certificate-request-timeout': Flags.string({
      description: 'How long a certificate signing request may wait to be approved and issued before it is given up and retried.',
      default: formatDuration(IDENTITY_DEFAULTS.csrTimeoutMs),
      helpValue: '<duration>',
    }),
    qps: Flags.string({description: 'Kubernetes client requests per second.', default: String(IDENTITY_DEFAULTS.qps), helpValue: '<number>'}),
    burst: Flags.integer({description: 'Kubernetes client burst.', default: IDENTITY_DEFAULTS.burst}),
    'metrics-bind-address': bindAddressFlag({description: 'Address of /metrics, /healthz and /readyz (not ready while another live holder renews the pool Lease), e.g. :9090; 0 turns it off.', default: '0'}),
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
    const identityValidation = validateIdentityOptions({
      kubeconfig: flags.kubeconfig,
      secretName: flags['kubeconfig-secret-name'],
      secretNamespace: flags['kubeconfig-secret-namespace'],
      bootstrapKubeconfig: flags['bootstrap-kubeconfig'],
      rotateCertificates: flags['rotate-certificates'],
      qps: flags.qps,
      burst: flags.burst,
      csrTimeout: flags['certificate-request-timeout'],
    })
    const errors = [...(validation.ok ? [] : validation.errors), ...(identityValidation.ok ? [] : identityValidation.errors)]
    if (!validation.ok || !identityValidation.ok) failUsage(this, errors)
    const options = validation.options
    const identity = identityValidation.options

    // Imported once the flags are valid, so that a usage error exits before client-node and gRPC load.
    const [{kubeConfigOrUsageError, runUntilSignalled}, {limitRequestRate}, {discoverRuntimeEndpoint}, {createLogger}, {poolletKubeConfig}, {runPoollet}] = await Promise.all([
      import('../cli/long-running.ts'),
      import('../kube/http/request-rate.ts'),
      import('../iri/index.ts'),
      import('../observe/logger.ts'),
      import('../app/poollet-kubeconfig.ts'),
      import('../app/poollet.ts'),
    ])
    // A plain kubeconfig file (or the default rules) is read now, so that a bad one is a usage error.
    const plain = identity.source.type === 'secret' || identity.bootstrapKubeconfig !== undefined || identity.rotateCertificates ? undefined : kubeConfigOrUsageError(this, flags.kubeconfig)
    if (plain !== undefined) limitRequestRate(plain, identity, systemClock)
    const logger = createLogger({level: flags['log-level'], format: flags['log-format']}).child({kind: options.kind.name, pool: options.poolName})
    await runUntilSignalled(this, logger, async (signal) => {
      const runtimeEndpoint = await discoverRuntimeEndpoint({
        kind: options.kind,
        flag: flags['runtime-endpoint'],
        timeoutMs: options.runtimeDiscoveryTimeoutMs,
        signal,
      })
      const {kubeConfig, rotation, onRotationFailure} = plain !== undefined ? {kubeConfig: plain} : await poolletKubeConfig(identity, {kind: options.kind, pool: options.poolName, logger}, signal)
      const holderIdentity = flags['holder-identity'] ?? defaultHolderIdentity(options.poolName, randomUUID())
      await runPoollet({options, kubeConfig, rotation, onRotationFailure, runtimeEndpoint, holderIdentity, metricsAddress: flags['metrics-bind-address'], logger}, signal)
    })
  }
}
