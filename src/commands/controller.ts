import {Command, Flags} from '@oclif/core'
import {randomUUID} from 'node:crypto'
import {hostname} from 'node:os'
import {bindAddressFlag, durationFlag, failUsage, kubeconfigFlag, loggingFlags, withEnv} from '../cli/flags.ts'
import {CONTROLLER_DEFAULTS, DEFAULT_ZONE_LABELS, validateControllerOptions, POOL_KIND_NAMES, POOL_KINDS, WOULD_MARK_REASON} from '../core/index.ts'

export default class Controller extends Command {
  static override summary = 'Mark pools Ready=Unknown when they show no sign of life for the grace period.'
  static override description = `Watches every pool and its Lease. A pool whose Lease renewTime, Ready status and observedGeneration have not changed for --grace-period (judged on this process's own clock) gets Ready=Unknown, once. Nothing is marked while the watches are not whole. Every flag can also be set by an IRONPOOL_<FLAG> environment variable.`
  static override examples = ['<%= config.bin %> controller', '<%= config.bin %> controller --leader-elect --grace-period=40s --max-unhealthy=30%']

  static override flags = withEnv({
    'grace-period': durationFlag({description: 'How long a pool may show no progress before it is marked Unknown; > 0.', default: CONTROLLER_DEFAULTS.gracePeriodMs}),
    kinds: Flags.string({description: `Comma-separated pool kinds to watch (${POOL_KIND_NAMES.join(', ')}). Default: every kind the API serves.`}),
    'max-unhealthy': Flags.string({description: 'Circuit breaker: when more pools of a kind than this (a count, or a percentage like 30%) are stale at once, mark none. Default: off.'}),
    kubeconfig: kubeconfigFlag(),
    'leader-elect': Flags.boolean({description: 'Elect a leader among replicas; only the leader writes.', default: false}),
    'leader-election-namespace': Flags.string({description: "Namespace of the leader election's Lease.", default: CONTROLLER_DEFAULTS.leaderElectionNamespace}),
    'leader-election-id': Flags.string({description: `Name of the leader election's Lease. Default: ${CONTROLLER_DEFAULTS.leaderElectionId}, or ${CONTROLLER_DEFAULTS.dryRunLeaderElectionId} with --dry-run.`}),
    'zone-label': Flags.string({
      multiple: true,
      description: `A label whose value is a pool's zone (repeat for several; the first a pool carries wins). Pools falling silent together are reported per zone, per Lease holder host and per kind. Default: ${DEFAULT_ZONE_LABELS.join(', then ')}.`,
    }),
    'dry-run': Flags.boolean({
      description: `Judge exactly as the controller would (same engine, sight, breaker, limiter, leader election) and write no pool: each mark it would make is logged, counted (ironpool_controller_dry_run_marks_total) and recorded as a ${WOULD_MARK_REASON} Event with its verdict record. Runs beside the controller in charge with deploy/dry-run's read-only role.`,
      default: false,
    }),
    'leader-elect-lease-duration': durationFlag({description: 'How long a leader Lease is valid without renewal.', default: CONTROLLER_DEFAULTS.leaseDurationMs}),
    'leader-elect-renew-deadline': durationFlag({description: 'How long the leader retries renewing before it gives up leadership.', default: CONTROLLER_DEFAULTS.renewDeadlineMs}),
    'leader-elect-retry-period': durationFlag({description: 'Time between leader election attempts.', default: CONTROLLER_DEFAULTS.retryPeriodMs}),
    'approve-poollet-csrs': Flags.boolean({
      description:
        "Approve poollets' client certificate requests, judged on their DER as the signer reads them (signer kubernetes.io/kube-apiserver-client; subject exactly one CN <kind prefix><pool> and one O, the kind's group; no extension, no SAN; usages exactly digital signature, key encipherment, client auth; a poollet only its own name), after a SubjectAccessReview for create on certificatesigningrequests/<kind>poolclient (bootstrap tokens) or self<kind>poolclient (a poollet's renewal); for clusters without IronCore's controller manager. Needs deploy/csr-approver. See deploy/poollet/README.md.",
      default: false,
    }),
    qps: Flags.string({
      description: `Requests per second the controller spends on confirming reads and Unknown writes, all kinds together (watches, probes and Events aside); > 0. Raise it for a fleet whose mass deaths outrun it: each dead pool costs two requests.`,
      default: String(CONTROLLER_DEFAULTS.qps),
      helpValue: '<number>',
    }),
    burst: Flags.integer({description: 'Requests allowed at once above --qps; >= 1.', default: CONTROLLER_DEFAULTS.burst}),
    'metrics-bind-address': bindAddressFlag({description: 'Address of /metrics; 0 turns it off.', default: ':8080'}),
    'health-probe-bind-address': bindAddressFlag({description: 'Address of /healthz and /readyz; 0 turns it off.', default: ':8081'}),
    'metrics-secure': Flags.boolean({
      description:
        "Serve /metrics over HTTPS and only to a bearer token that kube-apiserver authenticates (TokenReview) and allows `get` on the path (SubjectAccessReview: RBAC nonResourceURLs [\"/metrics\"]), as controller-runtime does; the health probes stay plain HTTP. deploy/controller sets it; deploy/monitoring gives Prometheus the RBAC and the token.",
      default: false,
    }),
    'metrics-cert-dir': Flags.string({description: 'With --metrics-secure: the directory of the serving certificate, tls.crt and tls.key. Default: a self-signed certificate made at start.'}),
    ...loggingFlags(),
  })

  async run(): Promise<void> {
    const {flags} = await this.parse(Controller)
    const validation = validateControllerOptions({
      gracePeriodMs: flags['grace-period'],
      kinds: flags.kinds,
      maxUnhealthy: flags['max-unhealthy'],
      leaderElect: flags['leader-elect'],
      leaderElectionNamespace: flags['leader-election-namespace'],
      leaderElectionId: flags['leader-election-id'],
      dryRun: flags['dry-run'],
      zoneLabels: flags['zone-label'],
      qps: flags.qps,
      burst: flags.burst,
      leaderElection: {
        leaseDurationMs: flags['leader-elect-lease-duration'],
        renewDeadlineMs: flags['leader-elect-renew-deadline'],
        retryPeriodMs: flags['leader-elect-retry-period'],
      },
    })
    if (!validation.ok) failUsage(this, validation.errors)
    if (flags['metrics-cert-dir'] !== undefined && !flags['metrics-secure']) failUsage(this, ['--metrics-cert-dir needs --metrics-secure (a certificate serves HTTPS only)'])
    const options = validation.options

    // Imported once the flags are valid, so that a usage error exits before client-node loads.
    const [{kubeConfigOrUsageError, runUntilSignalled}, {servedKinds}, {createLogger}, {runController}] = await Promise.all([
      import('../cli/long-running.ts'),
      import('../kube/stores/served-kinds.ts'),
      import('../observe/logger.ts'),
      import('../app/controller.ts'),
    ])
    const kubeConfig = kubeConfigOrUsageError(this, flags.kubeconfig)
    const logger = createLogger({level: flags['log-level'], format: flags['log-format']})
    await runUntilSignalled(this, logger, async (signal) => {
      const kinds = await servedKinds(kubeConfig, POOL_KIND_NAMES.map((n) => POOL_KINDS[n]), options.kinds)
      const le = options.leaderElection
      const identity = `${hostname()}_${randomUUID()}`
      await runController(
        {
          kubeConfig,
          kinds,
          gracePeriodMs: options.gracePeriodMs,
          maxUnhealthy: options.maxUnhealthy,
          leaderElection: le === undefined ? undefined : {...le, identity},
          identity: le === undefined ? hostname() : identity,
          dryRun: options.dryRun,
          zoneLabels: options.zoneLabels,
          requestLimits: options.requestLimits,
          metricsAddress: flags['metrics-bind-address'],
          probeAddress: flags['health-probe-bind-address'],
          ...(flags['metrics-secure'] && {metricsSecure: {certDir: flags['metrics-cert-dir']}}),
          approvePoolletCsrs: flags['approve-poollet-csrs'],
          logger,
        },
        signal,
      )
    })
  }
}
