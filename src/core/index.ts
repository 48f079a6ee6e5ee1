/**
 * The public face of the engine: what src/commands, src/kube and src/iri may use. Anything not
 * exported here is private to src/core.
 */
export {sleep, systemClock, type Cancel, type Clock} from './clock.ts'
export {
  POOL_KINDS,
  POOL_KIND_NAMES,
  READY_CONDITION,
  REASON_HEARTBEAT_RECEIVED,
  REASON_RUNTIME_UNREACHABLE,
  isPoolKindName,
  poolFromPoolletUser,
  type PoolKind,
  type PoolKindName,
} from './pool-kinds.ts'
export type * from './types.ts'
export {CONDITION_FIELDS, CONDITION_STATUSES, FULL_WRITE_PLAN} from './types.ts'
export {conditionDiffers, findCondition, formatMicroTime, formatTime, setCondition, type DesiredCondition} from './conditions.ts'
export {AlreadyExistsError, ConflictError, ForbiddenError, NotFoundError, ProbeError, RejectedError, errorMessage, isAnswer} from './errors.ts'
export type {EventSink, LeaseStore, Logger, PoolEvent, PoolStatusStore, RuntimeProbe} from './ports.ts'
export {READY_WRITE_ATTEMPTS, writeReady, type ReadyWriteOptions, type ReadyWriteResult} from './ready-writer.ts'

// Poollet: the heartbeat engine and its settings.
export {DEFAULT_JITTER_FACTOR, jittered, runEvery, type RunEveryOptions} from './run-every.ts'
export {LEASE_WRITE_ATTEMPTS, LeaseRenewer, defaultHolderIdentity, type LeaseRenewal, type LeaseRenewerOptions} from './heartbeat/lease-renewer.ts'
export {
  Heartbeat,
  type HeartbeatOptions,
  type LeaseResult,
  type ProbeResult,
  type ReadyResult,
  type TickResult,
} from './heartbeat/heartbeat.ts'
export {DurationSyntaxError, formatDuration, parseDuration} from './durations.ts'
export {
  POOLLET_DEFAULTS,
  POOLLET_FLAGS,
  isDnsSubdomain,
  validatePoolletOptions,
  type PoolletInput,
  type PoolletOptions,
  type PoolletValidation,
} from './heartbeat/poollet-options.ts'

// Controller: the lifecycle engine (one per pool kind) and its settings.
export {
  PoolLifecycle,
  type BreakerState,
} from './lifecycle/pool-lifecycle.ts'
export {
  DEFAULT_CONFIRM_TIMEOUT_MS,
  DEFAULT_GRACE_PERIOD_MS,
  DEFAULT_RETRY_BASE_MS,
  DEFAULT_RETRY_MAX_MS,
  breakerHoldMs,
  breakerWindowMs,
  type BreakerReport,
  type ConfirmOutcome,
  type LifecycleObserver,
  type MarkReport,
  type PoolLifecycleOptions,
  type UnmarkableReport,
} from './lifecycle/lifecycle-options.ts'
export {unmarkableMessage} from './lifecycle/lifecycle-reports.ts'
export {
  MAX_UNHEALTHY_FLAG,
  exceedsMaxUnhealthy,
  formatMaxUnhealthy,
  parseMaxUnhealthy,
  type BreakerTransition,
  type MaxUnhealthy,
} from './lifecycle/mass-silence/max-unhealthy.ts'
export type {HealthRecord} from './lifecycle/health-tracker.ts'
export {BLIND_REASONS, Sight, WRITE_PROBE_DEFAULTS, sightTimings, type BlindReason, type SightOptions, type SightState} from './lifecycle/sight/sight.ts'
export {WRITE_PROBE_LEASE, writeProbe, type WriteProbeOptions} from './lifecycle/sight/write-probe.ts'
export {ViewState, type BlindSpell, type ViewChange, type ViewObserver} from './lifecycle/sight/view-state.ts'
export {kindEngine, type KindEngine, type KindEngineOptions} from './lifecycle/kind-engine.ts'
export {DEFAULT_REQUEST_LIMITS, RequestLimiter, requestLimits, type RequestLimits} from './lifecycle/request-limiter.ts'
export {OVERDUE_STATES, VERDICT_ANNOTATION, VERDICT_VERSION, WOULD_MARK_REASON, type HoldReason, type OverdueState, type VerdictRecord} from './lifecycle/verdict.ts'
export {VIEW_RESTORED_REASON, breakerEvent, kindObject, viewRestoredEvent, zoneBreakerEvent} from './lifecycle/lifecycle-reports.ts'
export type {ZoneTransition} from './lifecycle/mass-silence/zone-breakers.ts'
export {parseVerdict} from './lifecycle/verdict-record.ts'
export {DEFAULT_ZONE_LABELS, SilenceGroups, groupKeys, groupPhrase, silenceGroupMessage, type GroupKey, type SilenceGroupReport} from './lifecycle/mass-silence/silence-groups.ts'
export {agreement, type AgreedMark, type Agreement, type MarkSighting} from './lifecycle/reading/agreement.ts'
export {dryRunNote, explainPool, silenceClause, WHY_EXIT_CODES, type PoolWhy, type VerdictSighting, type WhyInput, type WhyVerdict} from './lifecycle/reading/pool-why.ts'

// Leader election: client-go's semantics on a Lease, through the LeaseStore port and the Clock.
export {LeaderElector} from './leader/leader-elector.ts'
export {
  LEADER_ELECTION_DEFAULTS,
  LEADER_ELECTION_FLAGS,
  LEADER_JITTER_FACTOR,
  leaderElectionTimings,
  validateLeaderElection,
  type LeaderElectionResult,
  type LeaderElectionTimings,
  type LeaderElectorOptions,
  type LeaderLeaseRef,
} from './leader/leader-options.ts'
export {
  CONTROLLER_DEFAULTS,
  validateControllerOptions,
  type ControllerInput,
  type ControllerOptions,
  type ControllerValidation,
} from './lifecycle/controller-options.ts'

// Operators: what a pool looks like beside its Lease.
export {formatAge, holderMatchesPool, leaseExpiry, poolView, type PoolView} from './lifecycle/reading/pool-view.ts'

// Poollet identity: IronCore's CSR rules (poollet and approver) and when to renew a client certificate.
export {
  CLIENT_SIGNER,
  CSR_API_GROUP,
  CSR_RULES,
  POOLLET_CSR_USAGES,
  brokenRule,
  isValidObjectName,
  judgePoolletCsr,
  poolletCsrTemplate,
  poolletRequesterKind,
  subjectText,
  type CsrFacts,
  type CsrJudgement,
  type CsrRequester,
  type CsrRule,
  type PoolletCsrTemplate,
  type SubjectAttribute,
} from './identity/poollet-csr.ts'
export {
  RENEW_AT_MAX,
  RENEW_AT_MIN,
  certificateState,
  renewalTime,
  startupIdentity,
  type CertificateState,
  type CertificateTimes,
  type StartupIdentity,
  type StartupInput,
} from './identity/certificate-rotation.ts'
export {
  IDENTITY_DEFAULTS,
  IDENTITY_FLAGS,
  validateIdentityOptions,
  type IdentityInput,
  type IdentityOptions,
  type IdentityValidation,
  type KubeconfigSource,
} from './identity/identity-options.ts'
export {parseRateFlags, TokenBucket} from './token-bucket.ts'
export {FairQueue, type FairQueueOptions} from './fair-queue.ts'
