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
 * Work is fair across requesters (spec.username, which kube-apiserver sets): a queue per requester,
 * served round-robin, at most one review (SubjectAccessReview, approval) in flight per requester and
 * four in all, so that one bootstrap token flooding CSRs delays another requester's by one review at most;
 * and its Warning Events are bounded (20, then one a minute), its log lines not. Every value of the
 * request in a message (log line or Event) is bounded and escaped (./untrusted-text.ts), and each Event
 * message is at most Kubernetes' 1024 bytes.
 */
import type {KubeConfig, V1CertificateSigningRequest, V1SubjectAccessReview} from '@kubernetes/client-node'
import {brokenRule, CSR_API_GROUP, errorMessage, FairQueue, judgePoolletCsr, TokenBucket, type Clock, type CsrFacts, type CsrJudgement, type CsrRequester, type EventSink, type Logger, type PoolKind} from '../../core/index.ts'
import {httpStatus, translateApiError} from '../http/api-errors.ts'
import {ListWatchCache} from '../watch/list-watch-cache.ts'
import {customObjectSource} from '../watch/list-watch-source.ts'
import type {KubeObject} from '../watch/list-watch-store.ts'
import {apiRequest} from '../http/api-request.ts'
import {csrPath} from './certificate-request.ts'
import {readCsr} from './x509.ts'
import {boundMessage, EVENT_MESSAGE_MAX, quoteUntrusted} from './untrusted-text.ts'
import {watchTimeoutSeconds} from '../watch/resource-caches.ts'
import {WATCHDOG_DEFAULT_MS} from '../watch/list-watch-options.ts'

/** A CSR as the wire JSON (from the cache's list and watch): spec.request base64, times RFC 3339 strings. */
type Csr = V1CertificateSigningRequest & KubeObject

const REQUEST_TIMEOUT_MS = 10_000
/** Reviews in flight: in all, and per requester. */
export const REVIEW_CONCURRENCY = 4
export const REVIEWS_PER_REQUESTER = 1
/** Warning Events per requester: a burst of 20, then one a minute; past it, the log line alone says why. */
const WARNINGS_BURST = 20
const WARNINGS_PER_SECOND = 1 / 60
/** Requesters whose Warning budget is kept; past it the oldest are forgotten (a fresh budget each). */
const WARNING_BUDGETS_KEPT = 1_000
const SUBJECT_ACCESS_REVIEWS_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews'
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
 * which rule such facts break (two long names equal in their first 128 characters), so when the rule
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
  }
  const again = brokenRule(judgement.kind, bounded, {username: q(requester.username), groups: requester.groups.map(q)})
  const message = again?.rule === judgement.rule ? again.message : quoteUntrusted(judgement.message, JUDGEMENT_MESSAGE_MAX)
  return `not a valid ${judgement.kind.name} poollet client certificate request (rule ${judgement.rule}): ${message}`
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
}

export class CsrApprover {
  readonly cache: ListWatchCache<Csr>
  private readonly o: CsrApproverOptions
  /** UIDs already reported (an Event each), so a relist or an unrelated update repeats no Event. */
  private readonly reported = new Set<string>()
  private readonly queue: FairQueue
  private readonly warningBudgets = new Map<string, TokenBucket>()
  /** Reviews only while active (on the leader); activating reviews every cached CSR. */
  private active = false

  constructor(o: CsrApproverOptions) {
    this.o = o
    this.queue = new FairQueue({
      concurrency: REVIEW_CONCURRENCY,
      perKey: REVIEWS_PER_REQUESTER,
      run: (name) => this.review(name),
      onError: (name, error) => this.o.logger.warn({csr: name, error: errorMessage(error)}, 'review failed'),
    })
    const source = customObjectSource<Csr>(
      o.kubeConfig,
      {group: CSR_API_GROUP, version: 'v1', plural: 'certificatesigningrequests'},
      {inactivityTimeoutMs: WATCHDOG_DEFAULT_MS + 10_000, timeoutSeconds: () => watchTimeoutSeconds()},
    )
    this.cache = new ListWatchCache<Csr>({resource: 'certificatesigningrequests', list: source.list, watch: source.watch, logger: o.logger})
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
    const facts = await readCsr({signerName: spec.signerName, usages: spec.usages, request: Buffer.from(spec.request, 'base64')})
    const judgement = judgePoolletCsr(facts, {username: user, groups: spec.groups ?? []})
    if (judgement.verdict === 'foreign') {
      this.o.logger.debug({csr: name, user: quoteUntrusted(user)}, "no poollet's certificate signing request; left to other approvers")
      return
    }
    if (judgement.verdict === 'broken') {
      this.report(csr, uid, 'Warning', REASON_NOT_APPROVED, refusalMessage(judgement, facts, {username: user, groups: spec.groups ?? []}), judgement.rule)
      return
    }
    const {kind, subresource} = judgement
    let allowed: boolean
    let why = ''
    try {
      const body: V1SubjectAccessReview = {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: spec.username,
          uid: spec.uid,
          groups: spec.groups,
          extra: spec.extra,
          resourceAttributes: {group: CSR_API_GROUP, resource: 'certificatesigningrequests', verb: 'create', subresource},
        },
      }
      const review = await apiRequest<V1SubjectAccessReview>(this.o.kubeConfig, {method: 'POST', path: SUBJECT_ACCESS_REVIEWS_PATH, body, timeoutMs: REQUEST_TIMEOUT_MS})
      allowed = review.status?.allowed === true
      why = review.status?.reason ?? ''
    } catch (error) {
      this.o.logger.warn({csr: name, error: errorMessage(translateApiError(error, {verb: 'create', resource: 'subjectaccessreview'}))}, 'could not review the requester; trying again on the next change')
      return
    }
    if (!allowed) {
      this.report(csr, uid, 'Warning', REASON_NOT_APPROVED, `${quoteUntrusted(user)} may not create certificatesigningrequests/${subresource}${why ? `: ${quoteUntrusted(why, REVIEW_REASON_MAX)}` : ''}`, 'subject-access-review')
      return
    }
    // The CSR as read, every field kept, with the Approved condition added.
    const body: Csr = {
      ...csr,
      status: {...csr.status, conditions: [...(csr.status?.conditions ?? []), {type: 'Approved', status: 'True', reason: 'AutoApproved', message: approvalMessage(kind)}]},
    }
    try {
      await apiRequest(this.o.kubeConfig, {method: 'PUT', path: csrPath(name, 'approval'), body, timeoutMs: REQUEST_TIMEOUT_MS})
    } catch (error) {
      // A conflict means the CSR changed: its watch event brings it back here.
      const level = httpStatus(error) === 409 ? 'debug' : 'warn'
      this.o.logger[level]({csr: name, error: errorMessage(translateApiError(error, {verb: 'approve', resource: `certificatesigningrequest ${name}`}))}, 'could not approve')
      return
    }
    this.o.logger.info({csr: name, user: quoteUntrusted(user), kind: kind.name, pool: judgement.pool, subresource}, 'approved a poollet client certificate')
    this.report(csr, uid, 'Normal', REASON_APPROVED, `${approvalMessage(kind)} (${quoteUntrusted(user)})`)
  }

  /** `message` has its requester values bounded and escaped already; here it is bounded whole, for the log line as for the Event. */
  private report(csr: Csr, uid: string, type: 'Normal' | 'Warning', reason: string, unbounded: string, rule?: string): void {
    if (this.reported.has(uid)) return
    const message = boundMessage(unbounded, EVENT_MESSAGE_MAX)
    this.reported.add(uid)
    if (type === 'Warning') {
      const user = csr.spec.username ?? ''
      const event = this.warningBudget(user).tryTake()
      this.o.logger.info({csr: csr.metadata?.name, user: quoteUntrusted(user), rule, reason, message, ...(!event && {event: 'suppressed: this requester used its Warning Events'})}, 'poollet certificate signing request not approved')
      if (!event) return
    }
    this.o.events.record({apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', name: csr.metadata?.name ?? '', uid: csr.metadata?.uid, type, reason, message})
  }
}
