/**
 * The shipped deployment under repeated stalls (issue 26's sixth break): two replicas with
 * --leader-elect at its defaults (lease 15 s, renew deadline 10 s, retry 2 s) and the default 50 s
 * grace period, restarted by a stand-in kubelet when they exit, while kube-apiserver is SIGSTOPped for
 * 11 s every 40 to 75 s. Each stall outlasts the renew deadline, so each costs the leader its lease
 * (not its process: it is a standby again, its evidence kept). Before the fix every new leader started every grace period afresh: 22 new leaders in
 * 15 minutes, and the dead pools marked only after the stalls ended (904-964 s).
 */
import {expect} from 'chai'
import {seededRandom} from '../../support/seeded-random.ts'
import {waitFor} from '../../support/wait.ts'
import {fleetHooks, hold, type LogLine} from './fault-fleet.ts'
import {SupervisedReplica} from './supervised-replica.ts'

/** The stall: longer than the renew deadline (10 s), shorter than three failed probes take. */
const STALL_MS = 11_000
/** Stalls start every 40 to 75 s (the review's schedule). */
const PERIOD_MS = {min: 40_000, max: 75_000}
/** How long the stalls may go on before the dead pool must have been marked: the old code never did. */
const STALLING_LIMIT_MS = 6 * 60_000

describe('faults: the shipped deployment (2 replicas, --leader-elect at its defaults) under repeated kube-apiserver stalls', function () {
  this.timeout(12 * 60_000)
  const fleet = fleetHooks({})
  const replicas: SupervisedReplica[] = []

  afterEach(async () => {
    for (const replica of replicas.splice(0)) await replica.stop()
  })

  it('11 s stalls every 40-75 s, each costing the leader its lease: the dead pool is marked while they go on, no live pool is marked', async () => {
    const f = fleet()
    const {kubeconfig} = await f.controllerKubeconfig()
    const args = ['controller', `--kubeconfig=${kubeconfig}`, '--leader-elect', '--kinds=machine', '--metrics-bind-address=127.0.0.1:0', '--health-probe-bind-address=127.0.0.1:0', '--log-format=json', '--log-level=info']
    replicas.push(new SupervisedReplica(args), new SupervisedReplica(args))
    // A replica campaigns once it holds a grace period of evidence (50 s): wait for the first leader.
    await waitFor('a leader', () => replicas.some((r) => r.leaderships > 0), {timeoutMs: 180_000, intervalMs: 500})
    const fromChanges = f.changes.length

    await f.prepare()
    const frozenAt = Date.now()
    const random = seededRandom(26)
    const markedBy = () => replicas.find((r) => r.marked().includes(f.frozen))
    let stalls = 0
    let markedAfterMs: number | undefined
    try {
      while (markedAfterMs === undefined && Date.now() - frozenAt < STALLING_LIMIT_MS) {
        f.plane.pauseApiServer()
        await hold(STALL_MS)
        f.plane.resumeApiServer()
        stalls++
        const until = Date.now() + PERIOD_MS.min - STALL_MS + random() * (PERIOD_MS.max - PERIOD_MS.min)
        // The gap between stalls is the fault's schedule; within it, stop as soon as the mark is seen.
        while (Date.now() < until && markedBy() === undefined) await hold(250)
        if (markedBy() !== undefined) markedAfterMs = Date.now() - frozenAt
      }
    } finally {
      f.plane.resumeApiServer()
    }
    const losses = replicas.reduce((n, r) => n + r.losses, 0)
    const leaderships = replicas.reduce((n, r) => n + r.leaderships, 0)
    const restarts = replicas.reduce((n, r) => n + r.exits.length, 0)
    console.log(`      ${stalls} stalls; ${leaderships} leaderships, ${losses} lost, ${restarts} restarts; the frozen pool marked ${markedAfterMs === undefined ? 'never' : `${Math.round(markedAfterMs / 1000)} s after its poollet froze`}`)
    try {
      expect(markedAfterMs, 'the dead pool marked while the stalls went on').to.not.equal(undefined)
      expect(losses, 'the stalls cost leadership (the fault did what it is for)').to.be.above(0)
      expect(restarts, 'a replica that lost its lease stayed up, a standby again').to.equal(0)
      await f.settle()
      const live = new Set(f.live)
      const seen = f.changes.slice(fromChanges).filter((c) => c.status === 'Unknown' && live.has(c.pool))
      expect(seen.map((c) => c.pool), 'live pools seen Unknown on the API').to.deep.equal([])
      const marks = replicas.flatMap((r) => r.lines().filter((l: LogLine) => l.msg.includes('marked Ready=Unknown')).map((l) => String(l.fields.pool)))
      expect(marks.filter((pool) => live.has(pool)), 'live pools marked by either replica').to.deep.equal([])
      expect(marks.filter((pool) => pool === f.frozen), 'the dead pool marked once').to.have.length(1)
    } catch (error) {
      for (const [i, r] of replicas.entries()) console.log(`      --- replica ${i} (${r.runs.length} runs), last lines:\n${r.current?.stderr.slice(-25).join('\n') ?? ''}`)
      throw error
    }
  })
})
