import {KubeConfig} from '@kubernetes/client-node'
import {expect} from 'chai'
import {systemClock} from '../../../src/core/clock.ts'
import {LeaderElector} from '../../../src/core/leader-elector.ts'
import type {LeaderElectionResult} from '../../../src/core/leader-options.ts'
import type {LeaseStore} from '../../../src/core/ports.ts'
import {createLeaseStore} from '../../../src/kube/lease-store.ts'
import type {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {sharedControlPlane} from '../../support/control-plane.ts'
import {FakeLogger} from '../../support/fake-logger.ts'
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

  constructor(store: LeaseStore, lease: string, identity: string, releaseOnCancel = false) {
    this.identity = identity
    this.elector = new LeaderElector({
      store,
      clock: systemClock,
      logger: new FakeLogger(),
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

  /** Waits until the standby leads, sampling both on the way; returns the milliseconds it took. */
  async function takeover(leader: Candidate, standby: Candidate, since: number): Promise<number> {
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
    return performance.now() - since
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

    const stoppedAt = performance.now()
    leader.stop.abort() // no release: the standby must wait for expiry
    expect(await leader.done).to.equal('stopped')
    const took = await takeover(leader, standby, stoppedAt)
    // Not at once (the Lease was fresh), and within a lease duration plus two acquire tries and latency.
    expect(took).to.be.at.least(LEASE_MS / 2)
    expect(took).to.be.at.most(LEASE_MS + 2 * RETRY_MS * 2.2 + 1000)
    expect(overlaps(leader, standby)).to.deep.equal([])
    const lease = await store.get('ironpool-it-expiry')
    expect(lease?.spec).to.deep.include({holderIdentity: standby.identity, leaseTransitions: (first?.spec.leaseTransitions ?? 0) + 1})
  })

  it('releaseOnCancel: the standby takes over on its next try, well before the lease could expire', async () => {
    const [leader, standby] = await elect('ironpool-it-release', true)
    const stoppedAt = performance.now()
    leader.stop.abort()
    expect(await leader.done).to.equal('stopped')
    const took = await takeover(leader, standby, stoppedAt)
    // Expiry would take at least LEASE_MS - RETRY_MS after the stop; the release makes it one try.
    expect(took).to.be.below(LEASE_MS - RETRY_MS)
    expect(overlaps(leader, standby)).to.deep.equal([])
    expect((await store.get('ironpool-it-release'))?.spec.holderIdentity).to.equal(standby.identity)
  })
})
