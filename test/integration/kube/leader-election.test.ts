import {KubeConfig, Watch, type V1Lease} from '@kubernetes/client-node'
import path from 'node:path'
import {expect} from 'chai'
import {systemClock} from '../../../src/core/clock.ts'
import {LeaderElector} from '../../../src/core/leader/leader-elector.ts'
import type {LeaderElectionResult} from '../../../src/core/leader/leader-options.ts'
import type {LeaseStore} from '../../../src/core/ports.ts'
import {loadKubeConfig} from '../../../src/kube/http/kubeconfig.ts'
import {createLeaseStore} from '../../../src/kube/stores/lease-store.ts'
import type {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {sharedControlPlane} from '../../support/control-plane.ts'
import {FakeLogger} from '../../support/fake-logger.ts'
import {proxyKubeconfig} from '../../support/tcp-proxy.ts'
import {waitFor} from '../../support/wait.ts'

const NAMESPACE = 'ironpool-leader-election-test'
/** Short but in client-go's proportions: lease > renew deadline > retry × 1.2. */
const LEASE_MS = 1500
const RENEW_MS = 1000
const RETRY_MS = 200

/** One replica of the controller, reduced to its elector, with its leading intervals on the wall clock. */
class Candidate {
  readonly identity: string
  readonly elector: LeaderElector
  readonly stop = new AbortController()
  readonly intervals: {from: number; to?: number}[] = []
  readonly done: Promise<LeaderElectionResult>

  readonly logger = new FakeLogger()
  /** Each Lease this candidate read, in order: its holder and version. */
  readonly reads: {holder: string | undefined; resourceVersion: string | undefined}[] = []

  constructor(store: LeaseStore, lease: string, identity: string, releaseOnCancel = false) {
    this.identity = identity
    const reading: LeaseStore = {
      ...store,
      get: async (...args) => {
        const read = await store.get(...args)
        this.reads.push({holder: read?.spec.holderIdentity, resourceVersion: read?.resourceVersion})
        return read
      },
    }
    this.elector = new LeaderElector({
      store: reading,
      clock: systemClock,
      logger: this.logger,
      identity,
      name: lease,
      namespace: NAMESPACE,
      leaseDurationMs: LEASE_MS,
      renewDeadlineMs: RENEW_MS,
      retryPeriodMs: RETRY_MS,
      releaseOnCancel,
      onStartedLeading: (signal) => {
        const interval: {from: number; to?: number} = {from: performance.now()}
        this.intervals.push(interval)
        signal.addEventListener('abort', () => (interval.to = performance.now()), {once: true})
      },
    })
    this.done = this.elector.run(this.stop.signal)
  }
}

/** Leading intervals of two candidates that overlap in time (none, if the election works). */
function overlaps(a: Candidate, b: Candidate): string[] {
  const found: string[] = []
  for (const x of a.intervals) {
    for (const y of b.intervals) {
      if (x.from < (y.to ?? Infinity) && y.from < (x.to ?? Infinity)) found.push(`${a.identity} ${JSON.stringify(x)} and ${b.identity} ${JSON.stringify(y)}`)
    }
  }
  return found
}

/** Every version of one Lease that the API server stored, in order, from a watch as admin. */
class LeaseHistory {
  readonly versions: {resourceVersion: string; holder: string; transitions: number}[] = []
  private abort: (() => void) | undefined

  static async start(plane: ControlPlane, name: string): Promise<LeaseHistory> {
    const history = new LeaseHistory()
    const kc = new KubeConfig()
    kc.loadFromFile(plane.adminKubeconfig)
    const controller = await new Watch(kc).watch(
      `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`,
      {fieldSelector: `metadata.name=${name}`},
      (type, object: V1Lease) => {
        if (type !== 'ADDED' && type !== 'MODIFIED') return
        history.versions.push({resourceVersion: object.metadata?.resourceVersion ?? '', holder: object.spec?.holderIdentity ?? '', transitions: object.spec?.leaseTransitions ?? 0})
      },
      () => {},
    )
    history.abort = () => controller.abort()
    return history
  }

  stop(): void {
    this.abort?.()
  }
}

describe('leader election on a real Lease (kube-apiserver)', function () {
  this.timeout(60_000)
  let plane: ControlPlane
  let store: LeaseStore
  let candidates: Candidate[] = []

  before(async () => {
    plane = await sharedControlPlane()
    await plane.kubectl(['create', 'namespace', NAMESPACE])
    const kc = new KubeConfig()
    kc.loadFromFile(plane.adminKubeconfig)
    store = createLeaseStore(kc, NAMESPACE)
  })

  afterEach(async () => {
    for (const c of candidates) c.stop.abort()
    await Promise.all(candidates.map((c) => c.done))
    candidates = []
  })

  /** Starts two candidates on one Lease and waits until exactly one leads; returns [leader, standby]. */
  async function elect(lease: string, releaseOnCancel: boolean): Promise<[Candidate, Candidate]> {
    const a = new Candidate(store, lease, `${lease}-a`, releaseOnCancel)
    const b = new Candidate(store, lease, `${lease}-b`, releaseOnCancel)
    candidates = [a, b]
    const leader = await waitFor('one leader', () => (a.elector.isLeader !== b.elector.isLeader ? (a.elector.isLeader ? a : b) : undefined))
    return leader === a ? [a, b] : [b, a]
  }

  /** Waits until the standby leads, sampling both on the way. */
  async function takeover(leader: Candidate, standby: Candidate): Promise<void> {
    const both: number[] = []
    await waitFor(
      `${standby.identity} to lead`,
      () => {
        if (leader.elector.isLeader && standby.elector.isLeader) both.push(performance.now())
        return standby.elector.isLeader
      },
      {timeoutMs: 10_000, intervalMs: 20},
    )
    expect(both, 'samples with two leaders').to.deep.equal([])
  }

  it('elects exactly one leader, who keeps renewing; a stopped leader is replaced after the lease expires, never overlapping', async () => {
    const [leader, standby] = await elect('ironpool-it-expiry', false)
    const first = await store.get('ironpool-it-expiry')
    expect(first?.spec).to.deep.include({holderIdentity: leader.identity, leaseDurationSeconds: 2})
    // Several renew periods: still the same single leader, and the Lease moves.
    await waitFor('three renewals', async () => {
      expect(standby.elector.isLeader, 'standby leads while the leader renews').to.be.false
      const lease = await store.get('ironpool-it-expiry')
      return lease !== undefined && Date.parse(lease.spec.renewTime ?? '') >= Date.parse(first?.spec.renewTime ?? '') + 3 * RETRY_MS
    })
    expect(leader.elector.isLeader).to.be.true

    leader.stop.abort() // no release: the standby must wait for expiry
    expect(await leader.done).to.equal('stopped')
    const last = await store.get('ironpool-it-expiry')
    const readsBefore = standby.reads.length
    await takeover(leader, standby)
    // Not at once: the Lease was fresh. The standby read the stopped leader's last version again and
    // again (once per retry period, 7 in a lease duration) before it took over; one that did not wait
    // for expiry would have taken it at its first or second read. How soon after expiry it came is the
    // unit tests' business (fake clock).
    const unchanged = standby.reads.slice(readsBefore).filter((r) => r.holder === leader.identity && r.resourceVersion === last?.resourceVersion)
    expect(unchanged.length, 'reads of the stopped leader’s last Lease before the takeover').to.be.at.least(3)
    expect(overlaps(leader, standby)).to.deep.equal([])
    const lease = await store.get('ironpool-it-expiry')
    expect(lease?.spec).to.deep.include({holderIdentity: standby.identity, leaseTransitions: (first?.spec.leaseTransitions ?? 0) + 1})
  })

  it('a live leader cut off by a partition (its connection stalled) stops leading before the standby acquires, and no write of its lands after the new leader\'s first', async () => {
    const lease = 'ironpool-it-partition'
    const history = await LeaseHistory.start(plane, lease)
    // The leader talks to the API through a proxy that sees its requests (TLS terminated, see tcp-proxy.ts).
    const {proxy, kubeconfig} = await proxyKubeconfig(plane.adminKubeconfig, path.join(plane.dir, 'partitioned-leader.kubeconfig'), {terminateTls: true})
    try {
      const partitionedStore = createLeaseStore(loadKubeConfig({kubeconfig}), NAMESPACE)
      const leader = new Candidate(partitionedStore, lease, `${lease}-a`)
      candidates = [leader]
      await waitFor('the first candidate to lead', () => leader.elector.isLeader)
      const standby = new Candidate(store, lease, `${lease}-b`)
      candidates.push(standby)
      await waitFor('three renewals by the leader', () => history.versions.filter((v) => v.holder === leader.identity).length >= 4)
      expect(standby.elector.isLeader).to.be.false

      proxy.stall()
      const requestsAtStall = proxy.requests.length
      await takeover(leader, standby)
      // The partitioned leader saw its renew deadline pass, said so, and its run ended: a controller exits then.
      expect(await leader.done).to.equal('lost')
      expect(leader.logger.at('warn').map((e) => e.msg).join('\n')).to.match(/lost leader lease .*no successful renewal/)
      expect(overlaps(leader, standby)).to.deep.equal([])

      // The partition heals: what the old leader sent into it reaches the server only now, after the new
      // leader's writes. It must not land (its resourceVersion is stale).
      proxy.heal()
      await waitFor('the stalled requests delivered', () => proxy.requests.slice(requestsAtStall).some((r) => r.startsWith(`PUT /apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/${lease} `)), {timeoutMs: 10_000})
      const newLeaderWrites = () => history.versions.filter((v) => v.holder === standby.identity).length
      const atHeal = newLeaderWrites()
      await waitFor('two renewals by the new leader after the heal', () => newLeaderWrites() >= atHeal + 2, {timeoutMs: 10_000})
      const holders = history.versions.map((v) => v.holder)
      const firstOfNew = holders.indexOf(standby.identity)
      expect(firstOfNew, 'the new leader wrote').to.be.above(0)
      expect(holders.slice(0, firstOfNew).every((h) => h === leader.identity)).to.be.true
      expect(holders.slice(firstOfNew).filter((h) => h !== standby.identity), 'writes after the new leader\'s first').to.deep.equal([])
      expect(history.versions[firstOfNew]?.transitions, 'the takeover counted').to.equal((history.versions[firstOfNew - 1]?.transitions ?? 0) + 1)
    } finally {
      proxy.heal()
      await proxy.close()
      history.stop()
    }
  })

  it('releaseOnCancel: the standby takes over on its next try, well before the lease could expire', async () => {
    const history = await LeaseHistory.start(plane, 'ironpool-it-release')
    try {
      const [leader, standby] = await elect('ironpool-it-release', true)
      leader.stop.abort()
      expect(await leader.done).to.equal('stopped')
      await takeover(leader, standby)
      expect(overlaps(leader, standby)).to.deep.equal([])
      expect((await store.get('ironpool-it-release'))?.spec.holderIdentity).to.equal(standby.identity)
      // The order of the Lease's versions shows why: the leader's records, its release (no holder),
      // then the standby's, which took the released Lease rather than waiting for it to expire.
      const holders = history.versions.map((v) => v.holder).filter((h, i, all) => i === 0 || all[i - 1] !== h)
      expect(holders).to.deep.equal([leader.identity, '', standby.identity])
    } finally {
      history.stop()
    }
  })
})
