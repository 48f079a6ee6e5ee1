import {KubeConfig, type V1CertificateSigningRequest, type V1SubjectAccessReviewSpec} from '@kubernetes/client-node'
import {expect} from 'chai'
import type {PoolEvent} from '../../../../src/core/ports.ts'
import {POOL_KINDS, type PoolKind} from '../../../../src/core/pool-kinds.ts'
import {CLIENT_SIGNER, poolletCsrTemplate} from '../../../../src/core/identity/poollet-csr.ts'
import {CSR_PAGE_SIZE, CsrApprover, REASON_APPROVED, REASON_NOT_APPROVED, REQUEST_MAX_BYTES, REVIEW_CONCURRENCY, type Csr} from '../../../../src/kube/identity/csr-approver.ts'
import {ApiStatusError} from '../../../../src/kube/http/api-request.ts'
import type {CsrApproverApi} from '../../../../src/kube/identity/csr-approver-api.ts'
import {generateCsr} from '../../../../src/kube/identity/x509.ts'
import type {WatchCallbacks} from '../../../../src/kube/watch/watch-request.ts'
import {FakeClock, flushPromises} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'
import {waitFor} from '../../../support/wait.ts'
import {USAGES} from '../../../support/csr-craft.ts'

const machine = POOL_KINDS.machine
const volume = POOL_KINDS.volume
const bootstrap = (id: string, kind: PoolKind = machine) => ({username: `system:bootstrap:${id}`, groups: ['system:bootstrappers', kind.bootstrapperGroup, 'system:authenticated']})
const NOT_APPROVED = 'poollet certificate signing request not approved'

function httpError(code: number): Error {
  return new ApiStatusError(code, {kind: 'Status', code, message: `HTTP ${code}`})
}

/**
 * kube-apiserver as the approver sees it, in memory: the CSRs (list, watch), SubjectAccessReviews
 * answered by a table, pools that exist, and the approval subresource with kube-apiserver's
 * preconditions: a body whose metadata.uid or metadata.resourceVersion differs from the stored CSR's is
 * a 409, a body without them is applied unconditionally (CSRs allow unconditional updates).
 */
class FakeApi implements CsrApproverApi {
  readonly csrs = new Map<string, Csr>()
  private rv = 1
  private watchers = new Set<WatchCallbacks>()
  readonly reviews: V1SubjectAccessReviewSpec[] = []
  readonly approvals: Array<{name: string; body: V1CertificateSigningRequest; answer: string}> = []
  readonly pools = new Set<string>(['machine/p1', 'machine/p2', 'volume/v1'])
  /** Subresources each user may create. */
  readonly allowed = new Map<string, string[]>()
  reviewFails = false
  poolFails = false
  approveFails: number | undefined
  /** Held reviews: each review waits for its turn when set. */
  hold: Array<() => void> | undefined
  inFlight = 0
  maxInFlight = 0
  readonly inFlightBy = new Map<string, number>()
  maxInFlightPerUser = 0

  create(name: string, pem: string, requester: {username: string; groups: string[]}, extra: Partial<Csr['spec']> = {}): Csr {
    const csr: Csr = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: {name, uid: `uid-${name}-${this.rv}`, resourceVersion: String(++this.rv)},
      spec: {request: Buffer.from(pem).toString('base64'), signerName: CLIENT_SIGNER, usages: USAGES, ...requester, ...extra},
    }
    this.csrs.set(name, csr)
    this.send('ADDED', csr)
    return csr
  }

  delete(name: string): void {
    const csr = this.csrs.get(name)
    if (csr === undefined) return
    this.csrs.delete(name)
    this.send('DELETED', {...csr, metadata: {...csr.metadata, resourceVersion: String(++this.rv)}})
  }

  private send(type: string, csr: Csr): void {
    // A copy per delivery, as JSON off the wire is.
    for (const w of this.watchers) w.event(type, structuredClone(csr))
  }

  source = {
    list: () => Promise.resolve({items: [...this.csrs.values()].map((c) => structuredClone(c)), metadata: {resourceVersion: String(this.rv)}}),
    watch: (_rv: string, callbacks: WatchCallbacks) => {
      this.watchers.add(callbacks)
      return Promise.resolve({abort: () => void this.watchers.delete(callbacks)})
    },
  }

  async review(spec: V1SubjectAccessReviewSpec): Promise<{allowed: boolean; reason?: string}> {
    this.reviews.push(spec)
    const user = spec.user ?? ''
    this.inFlight++
    this.inFlightBy.set(user, (this.inFlightBy.get(user) ?? 0) + 1)
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight)
    this.maxInFlightPerUser = Math.max(this.maxInFlightPerUser, this.inFlightBy.get(user) ?? 0)
    try {
      if (this.hold !== undefined) await new Promise<void>((resolve) => this.hold!.push(resolve))
      if (this.reviewFails) throw httpError(500)
      const subresource = spec.resourceAttributes?.subresource ?? ''
      const allowed = (this.allowed.get(user) ?? []).includes(subresource)
      return allowed ? {allowed} : {allowed, reason: 'no RBAC policy matched'}
    } finally {
      this.inFlight--
      this.inFlightBy.set(user, (this.inFlightBy.get(user) ?? 1) - 1)
    }
  }

  poolExists(kind: PoolKind, name: string): Promise<boolean> {
    if (this.poolFails) return Promise.reject(httpError(503))
    return Promise.resolve(this.pools.has(`${kind.name}/${name}`))
  }

  async approve(name: string, body: V1CertificateSigningRequest): Promise<void> {
    await Promise.resolve()
    const stored = this.csrs.get(name)
    const record = (answer: string) => this.approvals.push({name, body: structuredClone(body), answer})
    if (this.approveFails !== undefined) {
      record(String(this.approveFails))
      throw httpError(this.approveFails)
    }
    if (stored === undefined) {
      record('404')
      throw httpError(404)
    }
    const uid = body.metadata?.uid
    const rv = body.metadata?.resourceVersion
    if ((uid !== undefined && uid !== stored.metadata?.uid) || (rv !== undefined && rv !== '' && rv !== stored.metadata?.resourceVersion)) {
      record('409')
      throw httpError(409)
    }
    record('200')
    const approved: Csr = {...stored, metadata: {...stored.metadata, resourceVersion: String(++this.rv)}, status: {conditions: body.status?.conditions ?? []}}
    this.csrs.set(name, approved)
    this.send('MODIFIED', approved)
  }

  isApproved(name: string): boolean {
    return (this.csrs.get(name)?.status?.conditions ?? []).some((c) => c.type === 'Approved')
  }
}

const kubeConfig = new KubeConfig()
kubeConfig.loadFromOptions({clusters: [{name: 'c', server: 'https://127.0.0.1:1'}], users: [{name: 'u'}], contexts: [{name: 'x', cluster: 'c', user: 'u'}], currentContext: 'x'})

interface Running {
  approver: CsrApprover
  api: FakeApi
  events: PoolEvent[]
  logger: FakeLogger
  decisions: string[]
  stop(): void
}

async function start(api: FakeApi, options: {active?: boolean} = {}): Promise<Running> {
  const events: PoolEvent[] = []
  const logger = new FakeLogger()
  const decisions: string[] = []
  const approver = new CsrApprover({kubeConfig, events: {record: (e) => events.push(e)}, logger, clock: new FakeClock(), api, source: api.source, onDecision: (d) => decisions.push(d)})
  const controller = new AbortController()
  void approver.cache.start(controller.signal)
  await approver.cache.waitForSync(controller.signal)
  if (options.active !== false) approver.setActive(true)
  return {approver, api, events, logger, decisions, stop: () => controller.abort()}
}

async function settle(r: Running): Promise<void> {
  await flushPromises()
  await r.approver.idle()
  await flushPromises()
}

const ownPem = async (kind: PoolKind, pool: string) => (await generateCsr(poolletCsrTemplate(kind, pool))).csrPem

describe('CsrApprover', function () {
  this.timeout(30_000)
  let r: Running | undefined
  afterEach(() => r?.stop())

  describe('approval and its precondition', () => {
    it("approves a bootstrap token's CSR for an existing pool after the SubjectAccessReview of <kind>poolclient, with the CSR's uid and resourceVersion in the body", async () => {
      const api = new FakeApi()
      api.allowed.set('system:bootstrap:a', [machine.csrSubresource])
      const csr = api.create('c1', await ownPem(machine, 'p1'), bootstrap('a'))
      r = await start(api)
      await settle(r)
      expect(api.isApproved('c1')).to.be.true
      expect(api.reviews.map((s) => [s.user, s.resourceAttributes?.resource, s.resourceAttributes?.verb, s.resourceAttributes?.subresource])).to.deep.equal([['system:bootstrap:a', 'certificatesigningrequests', 'create', machine.csrSubresource]])
      expect(api.approvals).to.have.length(1)
      const body = api.approvals[0]!.body
      expect(body.metadata?.uid, 'the uid precondition').to.equal(csr.metadata?.uid)
      expect(body.metadata?.resourceVersion, 'the resourceVersion precondition').to.equal(csr.metadata?.resourceVersion)
      expect(body.status?.conditions?.map((c) => [c.type, c.status, c.reason])).to.deep.equal([['Approved', 'True', 'AutoApproved']])
      expect(r.events.map((e) => [e.type, e.reason, e.name])).to.deep.equal([['Normal', REASON_APPROVED, 'c1']])
      expect(r.decisions).to.deep.equal(['approved'])
    })

    it("approves a poollet's renewal of its own name after the review of self<kind>poolclient (no pool look-up needed)", async () => {
      const api = new FakeApi()
      const user = `${machine.poolletUserPrefix}p9`
      api.allowed.set(user, [machine.selfCsrSubresource])
      api.create('c1', await ownPem(machine, 'p9'), {username: user, groups: [machine.poolletGroup, 'system:authenticated']})
      r = await start(api)
      await settle(r)
      expect(api.isApproved('c1')).to.be.true
      expect(api.reviews.map((s) => s.resourceAttributes?.subresource)).to.deep.equal([machine.selfCsrSubresource])
    })

    it('a CSR judged, then deleted and made again under the same name with a request for another pool, is not approved by the old judgement: the approval is a 409, and the new CSR is judged on its own', async () => {
      const api = new FakeApi()
      api.allowed.set('system:bootstrap:a', [machine.csrSubresource])
      api.allowed.set(`${machine.poolletUserPrefix}p1`, [machine.selfCsrSubresource])
      api.create('c1', await ownPem(machine, 'p1'), bootstrap('a'))
      const other = await ownPem(machine, 'p2')
      api.hold = []
      r = await start(api)
      await waitFor('the review in flight', () => api.hold?.length === 1, {timeoutMs: 10_000, intervalMs: 5})
      // While the review is in flight: the CSR goes, and one of the same name comes from a poollet asking for another pool's name.
      api.delete('c1')
      const replaced = api.create('c1', other, {username: `${machine.poolletUserPrefix}p1`, groups: [machine.poolletGroup]})
      const release = api.hold
      api.hold = undefined
      for (const go of release) go()
      await settle(r)
      expect(api.approvals.map((a) => a.answer), 'the old judgement sent with its preconditions, and refused').to.deep.equal(['409'])
      expect(api.isApproved('c1'), 'the CSR now under that name').to.be.false
      expect(r.logger.entries.filter((e) => e.msg === 'could not approve').map((e) => e.level)).to.deep.equal(['debug'])
      const refusal = r.logger.entries.find((e) => e.msg === NOT_APPROVED)
      expect(refusal?.obj.rule, 'the new CSR refused by its own review').to.equal('self')
      expect(api.csrs.get('c1')?.metadata?.uid).to.equal(replaced.metadata?.uid)
    })
  })

  describe('queueing', () => {
    it('reviews nothing while inactive (a standby); activating reviews every undecided CSR in the cache, none already approved or denied', async () => {
      const api = new FakeApi()
      api.allowed.set('system:bootstrap:a', [machine.csrSubresource])
      const pem = await ownPem(machine, 'p1')
      api.create('pending', pem, bootstrap('a'))
      api.create('approved', pem, bootstrap('a'))
      api.csrs.get('approved')!.status = {conditions: [{type: 'Approved', status: 'True', reason: 'x', message: 'y'}]}
      api.create('denied', pem, bootstrap('a'))
      api.csrs.get('denied')!.status = {conditions: [{type: 'Denied', status: 'True', reason: 'x', message: 'y'}]}
      api.create('signed', pem, bootstrap('a'))
      api.csrs.get('signed')!.status = {certificate: 'Y2VydA=='}
      r = await start(api, {active: false})
      api.create('later', pem, bootstrap('a'))
      await settle(r)
      expect(api.reviews, 'a standby reviews nothing').to.deep.equal([])
      r.approver.setActive(true)
      await settle(r)
      expect(api.approvals.map((a) => a.name).sort()).to.deep.equal(['later', 'pending'])
    })

    it(`one requester's flood waits its turn: at most one review per requester and ${REVIEW_CONCURRENCY} in all, and another requester's CSR is among the first reviewed`, async () => {
      const api = new FakeApi()
      const flood = await ownPem(volume, 'v1') // a machine token may not create volumepoolclient: each costs a review
      for (let i = 0; i < 30; i++) api.create(`flood-${i}`, flood, bootstrap('flood'))
      for (const id of ['b', 'c', 'd', 'e']) api.create(`legit-${id}`, await ownPem(machine, 'p1'), bootstrap(id))
      for (const id of ['b', 'c', 'd', 'e']) api.allowed.set(`system:bootstrap:${id}`, [machine.csrSubresource])
      r = await start(api)
      await settle(r)
      expect(api.maxInFlightPerUser).to.equal(1)
      expect(api.maxInFlight).to.be.at.most(REVIEW_CONCURRENCY)
      const order = api.reviews.map((s) => s.user)
      const lastOther = Math.max(...['b', 'c', 'd', 'e'].map((id) => order.indexOf(`system:bootstrap:${id}`)))
      expect(order.slice(0, lastOther).filter((u) => u === 'system:bootstrap:flood').length, "the flood's reviews before the last other requester's").to.be.at.most(2)
      expect(order.filter((u) => u === 'system:bootstrap:flood')).to.have.length(30)
      expect(['b', 'c', 'd', 'e'].every((id) => api.isApproved(`legit-${id}`))).to.be.true
    })
  })

  describe('refusals, each with its rule, a log line and a Warning Event, never an approval', () => {
    const refusedWith = async (api: FakeApi, name: string) => {
      r = await start(api)
      await settle(r)
      expect(api.isApproved(name)).to.be.false
      expect(api.approvals).to.deep.equal([])
      const line = r.logger.entries.find((e) => e.msg === NOT_APPROVED && e.obj.csr === name)
      expect(r.events.map((e) => [e.type, e.reason, e.name])).to.deep.equal([['Warning', REASON_NOT_APPROVED, name]])
      return {rule: line?.obj.rule, message: String(line?.obj.message), event: r.events[0]!.message}
    }

    it('a request that breaks a rule is refused before any call to the API', async () => {
      const api = new FakeApi()
      api.create('c1', await ownPem(machine, 'p1'), bootstrap('a'), {usages: ['client auth']})
      const refused = await refusedWith(api, 'c1')
      expect(refused.rule).to.equal('usages')
      expect(api.reviews).to.deep.equal([])
      expect(r!.decisions).to.deep.equal(['usages'])
    })

    it('a requester the SubjectAccessReview does not allow', async () => {
      const api = new FakeApi()
      api.create('c1', await ownPem(machine, 'p1'), bootstrap('a'))
      const refused = await refusedWith(api, 'c1')
      expect(refused.rule).to.equal('subject-access-review')
      expect(refused.message).to.equal(`system:bootstrap:a may not create certificatesigningrequests/${machine.csrSubresource}: no RBAC policy matched`)
    })

    it("a bootstrap token's CSR for a pool that does not exist (rule pool-exists)", async () => {
      const api = new FakeApi()
      api.allowed.set('system:bootstrap:a', [machine.csrSubresource])
      api.create('c1', await ownPem(machine, 'made-up'), bootstrap('a'))
      const refused = await refusedWith(api, 'c1')
      expect(refused.rule).to.equal('pool-exists')
      expect(refused.message).to.match(/^no machine pool made-up: a bootstrap token obtains a certificate only for a pool that exists/)
    })

    it(`a spec.request larger than ${REQUEST_MAX_BYTES} bytes is dropped before the cache keeps it, and refused naming its size (rule encoding)`, async () => {
      const api = new FakeApi()
      api.allowed.set('system:bootstrap:a', [machine.csrSubresource])
      const padded = (await ownPem(machine, 'p1')) + 'x'.repeat(1_480_000)
      api.create('c1', padded, bootstrap('a'))
      const refused = await refusedWith(api, 'c1')
      expect(refused.rule).to.equal('encoding')
      expect(refused.message).to.include(`spec.request is ${Buffer.byteLength(padded)} bytes, more than the ${REQUEST_MAX_BYTES}`)
      expect(r!.approver.cache.get('c1')?.spec.request, 'not kept').to.equal('')
    })

    it(`a spec.request of exactly ${REQUEST_MAX_BYTES} bytes is read (and here refused for what it holds, not for its size)`, async () => {
      const api = new FakeApi()
      const pem = await ownPem(machine, 'p1')
      api.create('c1', pem + ' '.repeat(REQUEST_MAX_BYTES - Buffer.byteLength(pem)), bootstrap('a'))
      const refused = await refusedWith(api, 'c1')
      expect(refused.rule).to.equal('encoding')
      expect(refused.message).to.include('not exactly one PEM block')
    })
  })

  describe('failures of the API: no decision, no Event, a warning', () => {
    for (const c of [
      {what: 'the SubjectAccessReview fails', set: (api: FakeApi) => (api.reviewFails = true), msg: 'could not review the requester; trying again on the next change'},
      {what: 'the pool cannot be read', set: (api: FakeApi) => (api.poolFails = true), msg: 'could not read the pool; trying again on the next change'},
      {what: 'the approval fails with a 500', set: (api: FakeApi) => (api.approveFails = 500), msg: 'could not approve'},
    ]) {
      it(c.what, async () => {
        const api = new FakeApi()
        api.allowed.set('system:bootstrap:a', [machine.csrSubresource])
        api.create('c1', await ownPem(machine, 'p1'), bootstrap('a'))
        c.set(api)
        r = await start(api)
        await settle(r)
        expect(api.isApproved('c1')).to.be.false
        expect(r.events).to.deep.equal([])
        expect(r.logger.entries.filter((e) => e.msg === c.msg).map((e) => e.level)).to.deep.equal(['warn'])
      })
    }
  })

  it(`lists ${CSR_PAGE_SIZE} CSRs a page`, async () => {
    const api = new FakeApi()
    const limits: number[] = []
    const list = api.source.list
    api.source.list = async (...args: Parameters<typeof list>) => {
      limits.push((args as unknown as [{limit: number}])[0].limit)
      return list()
    }
    r = await start(api)
    expect(limits).to.deep.equal([CSR_PAGE_SIZE])
  })
})
