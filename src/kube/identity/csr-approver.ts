/**
 * The controller's opt-in approver of poollets' client certificates (`--approve-poollet-csrs`), for
 * clusters without IronCore's controller manager. A CSR with a certificate or an Approved/Denied
 * condition is left alone; one whose DER every rule of a kind holds for (src/core/identity/poollet-csr.ts,
 * read by ./x509.ts) is approved when a SubjectAccessReview allows its requester `create` on the
 * subresource the rules name: `certificatesigningrequests/self<kind>poolclient` for a poollet renewing
 * its own name, `certificatesigningrequests/<kind>poolclient` for any other requester (a bootstrap
 * token). Nothing else is approved, and nothing is ever denied, as Kubernetes' own approvers do: a CSR
 * it does not approve stays for other approvers or a person (and is never signed meanwhile). Each
 * decision about a poollet's CSR is a log line naming the rule and an Event on the CSR; CSRs that are no
 * poollet's, from requesters that are no poollet's or bootstrapper's, pass with a debug line.
 *
 * What it caches is what it judges (issue 29): CSRs of the client signer only (a field selector), 4 a
 * page, each spec.request over REQUEST_MAX_BYTES dropped before the cache keeps it (the CSR is then
 * refused, rule `encoding`, naming its size); the cache's health is /readyz's `csr-cache` and a gauge
 * (src/app/csr-approval.ts). A bootstrap token is given a certificate only for a pool that exists
 * (rule `pool-exists`). The approval carries the CSR's uid and resourceVersion as read, so a CSR changed
 * or made again under the same name since it was judged is a 409, never approved by an old judgement.
 *
 * Work is fair across requesters (spec.username, which kube-apiserver sets): a queue per requester,
 * served round-robin, at most one review (SubjectAccessReview, approval) in flight per requester and
 * four in all, so that one bootstrap token flooding CSRs delays another requester's by one review at most;
 * and its Warning Events are bounded (20, then one a minute), its log lines not. Every value of the
 * request in a message (log line or Event) is bounded and escaped (./untrusted-text.ts), and each Event
 * message is at most Kubernetes' 1024 bytes.
 */
import type {KubeConfig, V1CertificateSigningRequest} from '@kubernetes/client-node'
import {brokenRule, CLIENT_SIGNER, CSR_API_GROUP, errorMessage, FairQueue, judgePoolletCsr, TokenBucket, type Clock, type CsrFacts, type CsrJudgement, type CsrRequester, type EventSink, type Logger, type PoolKind} from '../../core/index.ts'
import {httpStatus, translateApiError} from '../http/api-errors.ts'
import {ListWatchCache, type ListWatchCacheOptions} from '../watch/list-watch-cache.ts'
import {customObjectSource, withoutManagedFields, type Lister, type Watcher} from '../watch/list-watch-source.ts'
import type {KubeObject} from '../watch/list-watch-store.ts'
import {kubeCsrApproverApi, type CsrApproverApi} from './csr-approver-api.ts'
import {readCsr} from './x509.ts'
import {boundMessage, EVENT_MESSAGE_MAX, quoteUntrusted} from './untrusted-text.ts'
import {watchTimeoutSeconds} from '../watch/caches/resource-caches.ts'
import {WATCHDOG_DEFAULT_MS} from '../watch/list-watch-options.ts'

/** A CSR as the wire JSON (from the cache's list and watch): spec.request base64, times RFC 3339 strings. */
export type Csr = V1CertificateSigningRequest & KubeObject

/**
 * The largest spec.request (its PEM text, the bytes the base64 holds) the approver reads or keeps. A
 * poollet's request for an ECDSA P-256 key is about 450 bytes of PEM, one for RSA 4096 about 1.7 KB;
 * kube-apiserver takes up to what etcd stores (1.5 MiB by default) and reads only the first PEM block,
 * so 17 CSRs padded with text after it made a list of 33 MiB. A larger request is dropped from the
 * cached object before the cache keeps it, and the CSR is refused (rule `encoding`) saying how large it was.
 */
export const REQUEST_MAX_BYTES = 4096
/**
 * CSRs per list page. A CSR's answer is at most ~2.1 MB (etcd's 1.5 MiB object as JSON, spec.request
 * base64), so 4 of them stay far below the 32 MiB an answer may hold (MAX_ANSWER_BYTES), and one page
 * read and parsed at a time keeps the approver's peak low: after a restart among 17 CSRs of 1.48 MB it
 * peaked at 164-189 MiB with 4 a page, 158 with 2, 191 with 8 (csr-oversized.test.ts, one run each, a
 * busy machine), against the Deployment's 256 Mi; a page of 500 (client-go's size) was one 33 MB
 * answer. Fine for a real cluster too: with the signer's field selector a list holds client-certificate
 * CSRs only, which kube-controller-manager removes an hour after they are decided (a day if never).
 */
export const CSR_PAGE_SIZE = 4
/**
 * The largest CSR the cache reads (the watch layer leaves larger objects out, src/kube/watch): every CSR
 * etcd can hold (1.5 MiB, ~2.1 MB as JSON) and kube-apiserver's 3 MB request bound, well above the
 * shared 256 KiB, so that a padded CSR reaches trimCsr() and is refused with its reason (a Warning Event
 * its requester sees) instead of lying pending, unexplained, for a day.
 */
export const CSR_MAX_OBJECT_BYTES = 3 * 1024 * 1024
/** The only CSRs the approver judges, so the only ones it lists, watches and keeps. */
export const CSR_FIELD_SELECTOR = `spec.signerName=${CLIENT_SIGNER}`
/** Reviews in flight: in all, and per requester. */
export const REVIEW_CONCURRENCY = 4
export const REVIEWS_PER_REQUESTER = 1
/** Warning Events per requester: a burst of 20, then one a minute; past it, the log line alone says why. */
const WARNINGS_BURST = 20
const WARNINGS_PER_SECOND = 1 / 60
/** Requesters whose Warning budget is kept; past it the oldest are forgotten (a fresh budget each). */
const WARNING_BUDGETS_KEPT = 1_000
export const REASON_APPROVED = 'CertificateApproved'
export const REASON_NOT_APPROVED = 'CertificateNotApproved'

/** IronCore's approval message, per kind. */
export function approvalMessage(kind: PoolKind): string {
  return `Auto approving ${kind.name} pool client certificate after SubjectAccessReview.`
}

/** A rule's message whose requester values could not be bounded one by one is bounded whole, to this. */
const JUDGEMENT_MESSAGE_MAX = 512
/** The authorizer's reason a SubjectAccessReview gives, bounded (a webhook authorizer may say anything). */
const REVIEW_REASON_MAX = 256

/**
 * The message of a broken judgement, with every requester value in it (subject values, signer, usages,
 * extensions, attributes, why it is unreadable, username and groups) passed through quoteUntrusted():
 * the rule is asked again of the same facts with those values bounded and escaped. Bounding can change
 * which rule such facts break (two long names equal in their first 256 characters), so when the rule
 * asked again is not the one judged, the judged message is escaped and bounded whole instead.
 */
export function refusalMessage(judgement: Extract<CsrJudgement, {verdict: 'broken'}>, facts: CsrFacts, requester: CsrRequester): string {
  const q = (value: string) => quoteUntrusted(value)
  const bounded: CsrFacts = {
    signerName: q(facts.signerName),
    usages: facts.usages.map(q),
    ...(facts.unreadable !== undefined && {unreadable: quoteUntrusted(facts.unreadable, JUDGEMENT_MESSAGE_MAX)}),
    subject: facts.subject.map((rdn) => rdn.map((a) => ({type: q(a.type), stringType: q(a.stringType), value: q(a.value)}))),
    extensions: facts.extensions.map(q),
    attributes: facts.attributes.map(q),
    signatureValid: facts.signatureValid,
    publicKey: {...facts.publicKey, algorithm: q(facts.publicKey.algorithm), ...(facts.publicKey.curve !== undefined && {curve: q(facts.publicKey.curve)})},
    signatureAlgorithm: {...facts.signatureAlgorithm, name: q(facts.signatureAlgorithm.name)},
  }
  const again = brokenRule(judgement.kind, bounded, {username: q(requester.username), groups: requester.groups.map(q)})
  const message = again?.rule === judgement.rule ? again.message : quoteUntrusted(judgement.message, JUDGEMENT_MESSAGE_MAX)
  return `not a valid ${judgement.kind.name} poollet client certificate request (rule ${judgement.rule}): ${message}`
}

/** Bytes of spec.request dropped from a cached CSR (it was larger than REQUEST_MAX_BYTES), by the object. */
const droppedRequests = new WeakMap<object, number>()

/**
 * The CSR as the cache keeps it: a spec.request larger than REQUEST_MAX_BYTES replaced by '', its size
 * remembered. Everything else a requester may make large is bounded by kube-apiserver (annotations
 * 256 KiB in all, labels 63 characters a value); managedFields are stripped by the source.
 */
export function trimCsr<T>(object: T): T {
  const spec = (object as {spec?: {request?: unknown}} | undefined)?.spec
  if (typeof spec?.request === 'string' && spec.request.length > Math.ceil(REQUEST_MAX_BYTES / 3) * 4) {
    droppedRequests.set(object as object, Buffer.byteLength(spec.request, 'base64'))
    spec.request = ''
  }
  return object
}

/** The list and watch of a source with every CSR trimmed (trimCsr) before the cache sees it: for a source given as a test seam. */
export function trimmedSource(source: {list: Lister<Csr>; watch: Watcher}): {list: Lister<Csr>; watch: Watcher} {
  return {
    list: async (page) => {
      const answer = await source.list(page)
      for (const item of answer.items ?? []) trimCsr(item)
      return answer
    },
    watch: (resourceVersion, callbacks) =>
      source.watch(resourceVersion, {
        event: (type, object) => callbacks.event(type, trimCsr(object)),
        done: (error) => callbacks.done(error),
        ...(callbacks.oversized !== undefined && {oversized: (event) => callbacks.oversized?.(event)}),
      }),
  }
}

function decided(csr: Csr): boolean {
  if (csr.status?.certificate) return true
  return (csr.status?.conditions ?? []).some((c) => c.type === 'Approved' || c.type === 'Denied')
}

export interface CsrApproverOptions {
  kubeConfig: KubeConfig
  events: EventSink
  logger: Logger
  clock: Clock
  /** Test seam: the SubjectAccessReview, the approval and the pool's existence. Default: kube-apiserver's, by kubeConfig. */
  api?: CsrApproverApi
  /** Test seam: the CSRs' list and watch (trimmed by trimmedSource() all the same). Default: kube-apiserver's, with CSR_FIELD_SELECTOR. */
  source?: {list: Lister<Csr>; watch: Watcher}
  /** Told of each decision reported about a poollet's CSR, once per CSR: 'approved', or the rule that refused it. Default: nothing. */
  onDecision?: (outcome: string) => void
  /** Counters of the cache's relists and watch restarts. Default: nothing. */
  observer?: ListWatchCacheOptions<Csr>['observer']
  /** Test seam: the cache's retry delays. */
  cacheBackoff?: ListWatchCacheOptions<Csr>['backoff']
}

export class CsrApprover {
  readonly cache: ListWatchCache<Csr>
  private readonly o: CsrApproverOptions
  private readonly api: CsrApproverApi
  /** UIDs already reported (an Event each), so a relist or an unrelated update repeats no Event. */
  private readonly reported = new Set<string>()
  private readonly queue: FairQueue
  private readonly warningBudgets = new Map<string, TokenBucket>()
  /** Reviews only while active (on the leader); activating reviews every cached CSR. */
  private active = false

  constructor(o: CsrApproverOptions) {
    this.o = o
    this.api = o.api ?? kubeCsrApproverApi(o.kubeConfig)
    this.queue = new FairQueue({
      concurrency: REVIEW_CONCURRENCY,
      perKey: REVIEWS_PER_REQUESTER,
      run: (name) => this.review(name),
      onError: (name, error) => this.o.logger.warn({csr: name, error: errorMessage(error)}, 'review failed'),
    })
    const source =
      o.source !== undefined
        ? trimmedSource(o.source)
        : customObjectSource<Csr>(
            o.kubeConfig,
            {group: CSR_API_GROUP, version: 'v1', plural: 'certificatesigningrequests', fieldSelector: CSR_FIELD_SELECTOR},
            {inactivityTimeoutMs: WATCHDOG_DEFAULT_MS + 10_000, timeoutSeconds: () => watchTimeoutSeconds(), maxObjectBytes: CSR_MAX_OBJECT_BYTES, transform: (object) => trimCsr(withoutManagedFields(object))},
          )
    this.cache = new ListWatchCache<Csr>({resource: 'certificatesigningrequests', list: source.list, watch: source.watch, logger: o.logger, clock: o.clock, pageSize: CSR_PAGE_SIZE, observer: o.observer, ...(o.cacheBackoff && {backoff: o.cacheBackoff})})
    this.cache.onEvent((event) => {
      if (event.type === 'delete') {
        if (event.object.metadata?.uid) this.reported.delete(event.object.metadata.uid)
        return
      }
      if (this.active) this.enqueue(event.object)
    })
  }

  private warningBudget(user: string): TokenBucket {
    let bucket = this.warningBudgets.get(user)
    if (bucket === undefined) {
      if (this.warningBudgets.size >= WARNING_BUDGETS_KEPT) this.warningBudgets.delete(this.warningBudgets.keys().next().value ?? '')
      bucket = new TokenBucket(WARNINGS_PER_SECOND, WARNINGS_BURST, this.o.clock)
      this.warningBudgets.set(user, bucket)
    }
    return bucket
  }

  setActive(active: boolean): void {
    this.active = active
    if (!active) return
    for (const csr of this.cache.list()) this.enqueue(csr)
    this.o.logger.info({queued: this.queue.size}, 'approving poollet client certificates')
  }

  private enqueue(csr: Csr): void {
    if (csr.metadata?.name === undefined || decided(csr)) return
    this.queue.add(csr.spec.username ?? '', csr.metadata.name)
  }

  /** Resolves when every CSR seen so far has been reviewed. */
  idle(): Promise<void> {
    return this.queue.idle()
  }

  /** Reviews one CSR by name, from the cache's current state. */
  async review(name: string): Promise<void> {
    const csr = this.cache.get(name)
    if (csr === undefined || decided(csr)) return
    const uid = csr.metadata?.uid ?? name
    const spec = csr.spec
    const user = spec.username ?? ''
    const dropped = droppedRequests.get(csr)
    const facts: CsrFacts =
      dropped === undefined
        ? await readCsr({signerName: spec.signerName, usages: spec.usages, request: Buffer.from(spec.request, 'base64')})
        : {signerName: spec.signerName, usages: spec.usages ?? [], unreadable: `spec.request is ${dropped} bytes, more than the ${REQUEST_MAX_BYTES} a poollet's request can need: not read`, subject: [], extensions: [], attributes: [], signatureValid: false, publicKey: {algorithm: 'unread'}, signatureAlgorithm: {name: 'unread'}}
    const requester: CsrRequester = {username: user, groups: spec.groups ?? []}
    const judgement = judgePoolletCsr(facts, requester)
    if (judgement.verdict === 'foreign') {
      this.o.logger.debug({csr: name, user: quoteUntrusted(user)}, "no poollet's certificate signing request; left to other approvers")
      return
    }
    if (judgement.verdict === 'broken') {
      this.report(csr, uid, 'Warning', REASON_NOT_APPROVED, refusalMessage(judgement, facts, requester), judgement.rule)
      return
    }
    const {kind, subresource, pool} = judgement
    let review: {allowed: boolean; reason?: string}
    try {
      review = await this.api.review({
        user: spec.username,
        uid: spec.uid,
        groups: spec.groups,
        extra: spec.extra,
        resourceAttributes: {group: CSR_API_GROUP, resource: 'certificatesigningrequests', verb: 'create', subresource},
      })
    } catch (error) {
      this.o.logger.warn({csr: name, error: errorMessage(translateApiError(error, {verb: 'create', resource: 'subjectaccessreview'}))}, 'could not review the requester; trying again on the next change')
      return
    }
    if (!review.allowed) {
      const why = review.reason ?? ''
      this.report(csr, uid, 'Warning', REASON_NOT_APPROVED, `${quoteUntrusted(user)} may not create certificatesigningrequests/${subresource}${why ? `: ${quoteUntrusted(why, REVIEW_REASON_MAX)}` : ''}`, 'subject-access-review')
      return
    }
    // A bootstrap token may name any pool of its kind: it is given only one that exists (see the threat
    // model in deploy/poollet/README.md). A poollet renewing its own name was given it before.
    if (subresource === kind.csrSubresource) {
      let exists: boolean
      try {
        exists = await this.api.poolExists(kind, pool)
      } catch (error) {
        this.o.logger.warn({csr: name, error: errorMessage(translateApiError(error, {verb: 'get', resource: `${kind.plural} ${pool}`}))}, 'could not read the pool; trying again on the next change')
        return
      }
      if (!exists) {
        this.report(csr, uid, 'Warning', REASON_NOT_APPROVED, `no ${kind.name} pool ${pool}: a bootstrap token obtains a certificate only for a pool that exists (create the ${kind.kind} first; the poollet's next request is approved)`, 'pool-exists')
        return
      }
    }
    // The CSR as read, every field kept (uid and resourceVersion: the preconditions), with the Approved condition added.
    const body: Csr = {
      ...csr,
      status: {...csr.status, conditions: [...(csr.status?.conditions ?? []), {type: 'Approved', status: 'True', reason: 'AutoApproved', message: approvalMessage(kind)}]},
    }
    try {
      await this.api.approve(name, body)
    } catch (error) {
      // A conflict means the CSR changed: its watch event brings it back here.
      const level = httpStatus(error) === 409 ? 'debug' : 'warn'
      this.o.logger[level]({csr: name, error: errorMessage(translateApiError(error, {verb: 'approve', resource: `certificatesigningrequest ${name}`}))}, 'could not approve')
      return
    }
    this.o.logger.info({csr: name, user: quoteUntrusted(user), kind: kind.name, pool, subresource}, 'approved a poollet client certificate')
    this.report(csr, uid, 'Normal', REASON_APPROVED, `${approvalMessage(kind)} (${quoteUntrusted(user)})`)
  }

  /** `message` has its requester values bounded and escaped already; here it is bounded whole, for the log line as for the Event. */
  private report(csr: Csr, uid: string, type: 'Normal' | 'Warning', reason: string, unbounded: string, rule?: string): void {
    if (this.reported.has(uid)) return
    const message = boundMessage(unbounded, EVENT_MESSAGE_MAX)
    this.reported.add(uid)
    this.o.onDecision?.(rule ?? 'approved')
    if (type === 'Warning') {
      const user = csr.spec.username ?? ''
      const event = this.warningBudget(user).tryTake()
      this.o.logger.info({csr: csr.metadata?.name, user: quoteUntrusted(user), rule, reason, message, ...(!event && {event: 'suppressed: this requester used its Warning Events'})}, 'poollet certificate signing request not approved')
      if (!event) return
    }
    this.o.events.record({apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', name: csr.metadata?.name ?? '', uid: csr.metadata?.uid, type, reason, message})
  }
}
