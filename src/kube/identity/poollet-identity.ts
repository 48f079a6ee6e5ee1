/**
 * A poollet's identity over its life, after the kubelet's bootstrap and certificate manager and
 * IronCore's config getter: at start, use the stored kubeconfig, or bootstrap one through a CSR when
 * there is none or its certificate is (about to be) expired; then, with rotation on, renew the
 * certificate at a jittered 70–90 % of its lifetime and switch the running process to it in place.
 *
 * The CSR of a renewal is made with the current identity (so a long-expired bootstrap token does not
 * matter), falling back to the bootstrap kubeconfig when the current one is refused. A failure is one
 * log line and a retry after a growing delay: never a crash loop, never a stop of the heartbeat, which
 * keeps using the current certificate meanwhile.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {errorMessage, formatDuration, poolletCsrTemplate, renewalTime, sleep, startupIdentity, type CertificateTimes, type Clock, type Logger, type PoolKind} from '../../core/index.ts'
import {CsrRefusedError, requestCertificate} from './certificate-request.ts'
import {clientCertificatePem, kubeConfigFromString, renderIssuedKubeconfig, switchIdentity} from './issued-kubeconfig.ts'
import type {KubeconfigStore} from './kubeconfig-store.ts'
import {certificateInfo, generateCsr} from './x509.ts'

/** Retries after a failed bootstrap or renewal: 5 s, doubling, at most 5 min (a CSR per retry). */
export const RETRY_INITIAL_MS = 5_000
export const RETRY_MAX_MS = 5 * 60_000
export const DEFAULT_CSR_TIMEOUT_MS = 5 * 60_000

export interface PoolletIdentityOptions {
  kind: PoolKind
  pool: string
  store: KubeconfigStore
  /** The bootstrap kubeconfig (already loaded), and its path for messages. */
  bootstrap?: {kubeConfig: KubeConfig; path: string}
  clock: Clock
  logger: Logger
  /** How long one CSR may wait for approval and issue. Default {@link DEFAULT_CSR_TIMEOUT_MS}. */
  csrTimeoutMs?: number
  /** Test seams. */
  csrPollMs?: number
  retryInitialMs?: number
  random?: () => number
  /** Called on each KubeConfig this makes from text (stored or issued), e.g. to share connections and limit the rate. */
  prepare?: (kc: KubeConfig) => void
}

interface Current {
  times: CertificateTimes
  commonName: string
}

export class PoolletIdentity {
  /** The kubeconfig every client of the poollet uses; switched in place on each renewal. */
  readonly kubeConfig: KubeConfig
  private current: Current | undefined
  private readonly o: PoolletIdentityOptions
  private readonly rotationFailureListeners: Array<(error: unknown) => void> = []

  private constructor(o: PoolletIdentityOptions, kubeConfig: KubeConfig, current: Current | undefined) {
    this.o = o
    this.kubeConfig = kubeConfig
    this.current = current
  }

  /**
   * The identity to start with: the stored kubeconfig when usable, else a bootstrapped one. Retries a
   * failed bootstrap until it works or signal aborts; throws at once only when nothing could ever work.
   */
  static async establish(o: PoolletIdentityOptions, signal: AbortSignal): Promise<PoolletIdentity> {
    let delay = o.retryInitialMs ?? RETRY_INITIAL_MS
    for (;;) {
      try {
        return await PoolletIdentity.establishOnce(o, signal)
      } catch (error) {
        if (signal.aborted || error instanceof NoIdentityError) throw error
        o.logger.error({error: errorMessage(error), retryIn: formatDuration(delay)}, `could not obtain a client certificate: ${errorMessage(error)}`)
        await sleep(o.clock, delay, signal)
        delay = Math.min(delay * 2, RETRY_MAX_MS)
      }
    }
  }

  private static async establishOnce(o: PoolletIdentityOptions, signal: AbortSignal): Promise<PoolletIdentity> {
    const text = await o.store.load()
    const stored = text === undefined ? undefined : kubeConfigFromString(text)
    const certPem = stored === undefined ? undefined : clientCertificatePem(stored)
    const info = certPem === undefined ? undefined : certificateInfo(certPem)
    const decision = startupIdentity({
      stored: stored === undefined ? undefined : info === undefined ? {hasCertificate: false, exists: true} : {hasCertificate: true, times: info.times},
      bootstrapAvailable: o.bootstrap !== undefined,
      now: o.clock.wall(),
    })
    if (decision.action === 'fail') throw new NoIdentityError(`${o.store.describe}: ${decision.reason}`)
    if (decision.action === 'use' && stored !== undefined) {
      o.prepare?.(stored)
      o.logger.info({kubeconfig: o.store.describe, ...(info && {user: info.commonName, notAfter: new Date(info.times.notAfter).toISOString()})}, 'using the stored kubeconfig')
      return new PoolletIdentity(o, stored, info)
    }
    const bootstrap = o.bootstrap
    if (bootstrap === undefined) throw new NoIdentityError(`${o.store.describe}: no usable kubeconfig and no bootstrap kubeconfig`)
    o.logger.info({kubeconfig: o.store.describe, bootstrapKubeconfig: bootstrap.path, reason: decision.action === 'bootstrap' ? decision.reason : ''}, 'bootstrapping a client certificate')
    const issued = await issue(o, bootstrap.kubeConfig, `the bootstrap kubeconfig ${bootstrap.path}`, signal)
    const live = kubeConfigFromString(issued.kubeconfig)
    o.prepare?.(live)
    return new PoolletIdentity(o, live, issued.current)
  }

  /** The current client certificate's validity (wall ms), or undefined when it authenticates otherwise. */
  get certificateTimes(): CertificateTimes | undefined {
    return this.current?.times
  }

  /** Calls listener on each failed renewal of the rotation loop (for a metric); not on a failed bootstrap. */
  onRotationFailure(listener: (error: unknown) => void): void {
    this.rotationFailureListeners.push(listener)
  }

  /** The rotation loop (a runnable): renews before expiry until signal aborts. */
  async rotate(signal: AbortSignal): Promise<void> {
    const random = this.o.random ?? Math.random
    while (!signal.aborted) {
      const current = this.current
      if (current === undefined) {
        this.o.logger.warn({}, 'the kubeconfig authenticates without a client certificate: nothing to rotate')
        return
      }
      const at = renewalTime(current.times, random)
      this.o.logger.info({notAfter: new Date(current.times.notAfter).toISOString(), renewAt: new Date(at).toISOString()}, 'client certificate renewal scheduled')
      await sleep(this.o.clock, Math.max(0, at - this.o.clock.wall()), signal)
      let delay = this.o.retryInitialMs ?? RETRY_INITIAL_MS
      for (;;) {
        try {
          await this.renewOnce(signal)
          break
        } catch (error) {
          if (signal.aborted) throw error
          for (const listener of this.rotationFailureListeners) listener(error)
          this.o.logger.error({error: errorMessage(error), retryIn: formatDuration(delay)}, `could not renew the client certificate: ${errorMessage(error)}`)
          await sleep(this.o.clock, delay, signal)
          delay = Math.min(delay * 2, RETRY_MAX_MS)
        }
      }
    }
  }

  /** One renewal: a CSR with the current identity (the bootstrap one if that is refused), stored, then switched to. */
  async renewOnce(signal: AbortSignal): Promise<void> {
    let issued: Issued
    try {
      issued = await issue(this.o, this.kubeConfig, `the current identity (${this.current?.commonName ?? 'unknown'})`, signal)
    } catch (error) {
      const bootstrap = this.o.bootstrap
      if (!(error instanceof CsrRefusedError) || bootstrap === undefined) throw error
      this.o.logger.warn({error: errorMessage(error)}, 'the current identity may not request its renewal; using the bootstrap kubeconfig')
      issued = await issue(this.o, bootstrap.kubeConfig, `the bootstrap kubeconfig ${bootstrap.path}`, signal)
    }
    const next = kubeConfigFromString(issued.kubeconfig)
    switchIdentity(this.kubeConfig, next)
    const previous = this.current
    this.current = issued.current
    this.o.logger.info(
      {user: issued.current.commonName, notAfter: new Date(issued.current.times.notAfter).toISOString(), previousNotAfter: previous && new Date(previous.times.notAfter).toISOString()},
      'client certificate rotated; the running poollet now uses it',
    )
  }
}

/** Nothing to start with and nothing to bootstrap from: a configuration error, not retried. */
export class NoIdentityError extends Error {
  override readonly name = 'NoIdentityError'
}

interface Issued {
  kubeconfig: string
  current: Current
}

/** Key, CSR, wait, kubeconfig, store: the one path of both bootstrap and renewal. */
async function issue(o: PoolletIdentityOptions, requester: KubeConfig, describe: string, signal: AbortSignal): Promise<Issued> {
  const template = poolletCsrTemplate(o.kind, o.pool)
  const {csrPem, keyPem} = await generateCsr(template)
  const {certPem} = await requestCertificate(
    requester,
    {csrPem, signerName: template.signerName, usages: template.usages, generateName: `${o.kind.name}pool-${o.pool}-`},
    {clock: o.clock, logger: o.logger, requester: describe, timeoutMs: o.csrTimeoutMs ?? DEFAULT_CSR_TIMEOUT_MS, pollMs: o.csrPollMs, signal},
  )
  const info = certificateInfo(certPem)
  const kubeconfig = renderIssuedKubeconfig(requester, info.commonName, certPem, keyPem)
  await o.store.save(kubeconfig)
  o.logger.info({kubeconfig: o.store.describe, user: info.commonName, notAfter: new Date(info.times.notAfter).toISOString()}, 'client certificate issued and stored')
  return {kubeconfig, current: {commonName: info.commonName, times: {...info.times, obtainedAt: o.clock.wall()}}}
}
