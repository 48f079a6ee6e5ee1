import {expect} from 'chai'
import {LeadershipLostError, RunnableFailedError, ShutdownTimeoutError} from '../../../src/runtime/errors.ts'
import {Manager} from '../../../src/runtime/manager.ts'
import type {Runnable, RunnableGroup} from '../../../src/runtime/runnable.ts'
import {FakeClock, flushPromises} from '../../support/fake-clock.ts'
import {FakeLogger} from '../../support/fake-logger.ts'

/** What a test runnable does when told to stop. */
type OnAbort = 'return' | 'ignore' | 'reject-with-reason' | 'reject-abort-error' | 'reject-error'

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), {once: true})))
}

/** Records "start:<name>" and "stop:<name>" in a shared log; resolves `started` with its signal. */
class TestRunnable implements Runnable {
  readonly name: string
  readonly group: RunnableGroup | undefined
  readonly needLeaderElection: boolean | undefined
  readonly started = Promise.withResolvers<AbortSignal>()
  readonly ready = Promise.withResolvers<void>()
  waitReady: ((signal: AbortSignal) => Promise<void>) | undefined
  private readonly log: string[]
  private readonly onAbort: OnAbort
  constructor(log: string[], name: string, options: {group?: RunnableGroup; needLeaderElection?: boolean; onAbort?: OnAbort; gated?: boolean} = {}) {
    this.log = log
    this.name = name
    this.group = options.group
    this.needLeaderElection = options.needLeaderElection
    this.onAbort = options.onAbort ?? 'return'
    if (options.gated) this.waitReady = () => this.ready.promise
  }
  async start(signal: AbortSignal): Promise<void> {
    this.log.push(`start:${this.name}`)
    this.started.resolve(signal)
    await aborted(signal)
    this.log.push(`stop:${this.name}`)
    if (this.onAbort === 'ignore') await new Promise(() => {})
    if (this.onAbort === 'reject-with-reason') throw signal.reason
    if (this.onAbort === 'reject-abort-error') throw new DOMException('stopped', 'AbortError')
    if (this.onAbort === 'reject-error') throw new Error('flush failed')
  }
}

/** A runnable that fails on its own, after being started. */
function failing(log: string[], name: string, group?: RunnableGroup): Runnable & {fail(error: Error): void} {
  const failure = Promise.withResolvers<never>()
  return {
    name,
    group,
    fail: (error) => failure.reject(error),
    start: async () => {
      log.push(`start:${name}`)
      await failure.promise
    },
  }
}

async function settledWith(promise: Promise<void>): Promise<unknown> {
  return promise.then(() => 'resolved', (error: unknown) => error)
}

describe('Manager', () => {
  let log: string[]
  let logger: FakeLogger
  let stop: AbortController
  beforeEach(() => {
    log = []
    logger = new FakeLogger()
    stop = new AbortController()
  })
  afterEach(() => stop.abort())

  it('starts servers, then caches, then the rest, then leader-only; stops in reverse', async () => {
    const manager = new Manager({logger})
    const leaderOnly = new TestRunnable(log, 'writer', {needLeaderElection: true})
    manager.add(leaderOnly)
    manager.add(new TestRunnable(log, 'loop'))
    manager.add(new TestRunnable(log, 'cache', {group: 'caches'}))
    manager.add(new TestRunnable(log, 'server', {group: 'servers'}))
    const run = manager.run(stop.signal)
    await leaderOnly.started.promise
    stop.abort()
    await run
    expect(log).to.deep.equal(['start:server', 'start:cache', 'start:loop', 'start:writer', 'stop:writer', 'stop:loop', 'stop:cache', 'stop:server'])
  })

  it('waits for a group to be ready before starting the next', async () => {
    const manager = new Manager({logger})
    const cache = new TestRunnable(log, 'cache', {group: 'caches', gated: true})
    const loop = new TestRunnable(log, 'loop')
    manager.add(cache)
    manager.add(loop)
    const run = manager.run(stop.signal)
    await cache.started.promise
    await flushPromises()
    expect(log).to.deep.equal(['start:cache'])
    cache.ready.resolve()
    await loop.started.promise
    stop.abort()
    await run
  })

  it('ends with the error of a runnable that fails, after stopping the others', async () => {
    const manager = new Manager({logger})
    const server = new TestRunnable(log, 'server', {group: 'servers'})
    const broken = failing(log, 'heartbeat')
    manager.add(server)
    manager.add(broken)
    const run = manager.run(stop.signal)
    await server.started.promise
    await flushPromises()
    broken.fail(new Error('boom'))
    const error = await settledWith(run)
    expect(error).to.be.instanceOf(RunnableFailedError).and.include({runnable: 'heartbeat', message: 'heartbeat: boom'})
    expect((error as Error).cause).to.have.property('message', 'boom')
    expect(log).to.include('stop:server')
  })

  it('does not start later groups when a group fails to become ready', async () => {
    const manager = new Manager({logger})
    const server = new TestRunnable(log, 'metrics', {group: 'servers', gated: true})
    manager.add(server)
    manager.add(new TestRunnable(log, 'loop'))
    const run = manager.run(stop.signal)
    await server.started.promise
    server.ready.reject(new Error('cannot listen on :8080: EADDRINUSE'))
    const error = await settledWith(run)
    expect(error).to.be.instanceOf(RunnableFailedError).and.have.property('message', 'metrics: cannot listen on :8080: EADDRINUSE')
    expect(log).to.deep.equal(['start:metrics', 'stop:metrics'])
  })

  it('does not report cancellation as failure', async () => {
    const manager = new Manager({logger})
    const byReason = new TestRunnable(log, 'by-reason', {onAbort: 'reject-with-reason'})
    const byAbortError = new TestRunnable(log, 'by-abort-error', {onAbort: 'reject-abort-error'})
    manager.add(byReason)
    manager.add(byAbortError)
    const run = manager.run(stop.signal)
    await Promise.all([byReason.started.promise, byAbortError.started.promise])
    stop.abort()
    await run
    expect(logger.at('error')).to.deep.equal([])
  })

  it('logs an error raised while stopping without turning a clean stop into a failure', async () => {
    const manager = new Manager({logger})
    const flusher = new TestRunnable(log, 'flusher', {onAbort: 'reject-error'})
    manager.add(flusher)
    const run = manager.run(stop.signal)
    await flusher.started.promise
    stop.abort()
    await run
    expect(logger.at('error').map((e) => [e.msg, e.obj])).to.deep.equal([['runnable failed while stopping', {runnable: 'flusher', err: 'flush failed'}]])
  })

  it('keeps running when a runnable returns on its own', async () => {
    const manager = new Manager({logger})
    const loop = new TestRunnable(log, 'loop')
    manager.add({name: 'one-shot', start: () => Promise.resolve()})
    manager.add(loop)
    let settled = false
    const run = manager.run(stop.signal).finally(() => (settled = true))
    await loop.started.promise
    await flushPromises()
    expect(settled).to.be.false
    stop.abort()
    await run
  })

  describe('shutdown deadline', () => {
    it('gives up on a runnable that ignores abort after the default 5 s, naming it', async () => {
      const clock = new FakeClock()
      const manager = new Manager({logger, clock})
      const server = new TestRunnable(log, 'server', {group: 'servers'})
      const stuck = new TestRunnable(log, 'stuck', {onAbort: 'ignore'})
      manager.add(server)
      manager.add(stuck)
      let outcome: unknown
      const run = settledWith(manager.run(stop.signal)).then((o) => (outcome = o))
      await stuck.started.promise
      stop.abort()
      await clock.advance(4_999)
      expect(outcome).to.equal(undefined)
      await clock.advance(1)
      await run
      expect(outcome).to.be.instanceOf(ShutdownTimeoutError).and.deep.include({stillRunning: ['stuck']})
      // Out of time, the remaining groups are told to stop without being waited for.
      expect((await server.started.promise).aborted).to.be.true
    })

    it('honours a configured deadline', async () => {
      const clock = new FakeClock()
      const manager = new Manager({logger, clock, shutdownTimeoutMs: 1_000})
      const stuck = new TestRunnable(log, 'stuck', {onAbort: 'ignore'})
      manager.add(stuck)
      const run = settledWith(manager.run(stop.signal))
      await stuck.started.promise
      stop.abort()
      await clock.advance(1_000)
      expect(await run).to.be.instanceOf(ShutdownTimeoutError).and.have.property('message', 'runnables still running after the 1000 ms shutdown deadline: stuck')
    })
  })

  describe('leader election seam', () => {
    /** An election the test drives: it wins when told, and ends as told or when stopped. */
    function election() {
      const won = Promise.withResolvers<(leaderSignal: AbortSignal) => void>()
      const result = Promise.withResolvers<'lost' | 'stopped'>()
      const fn = (signal: AbortSignal, onStartedLeading: (leaderSignal: AbortSignal) => void) => {
        won.resolve(onStartedLeading)
        signal.addEventListener('abort', () => {
          log.push('stop:election')
          result.resolve('stopped')
        })
        return result.promise
      }
      return {fn, won: won.promise, result}
    }

    it('starts leader-only runnables only once leading, and stops them before the election', async () => {
      const elect = election()
      const manager = new Manager({logger, leaderElection: elect.fn})
      const writer = new TestRunnable(log, 'writer', {needLeaderElection: true})
      const loop = new TestRunnable(log, 'loop')
      manager.add(writer)
      manager.add(loop)
      const run = manager.run(stop.signal)
      const onStartedLeading = await elect.won
      await flushPromises()
      expect(log).to.deep.equal(['start:loop'])
      onStartedLeading(new AbortController().signal)
      await writer.started.promise
      stop.abort()
      await run
      expect(log).to.deep.equal(['start:loop', 'start:writer', 'stop:writer', 'stop:election', 'stop:loop'])
    })

    /** An election of many terms: each call is a campaign the test wins, then ends as 'lost' or 'stopped'. */
    function terms() {
      const campaigns: {won: (leaderSignal: AbortSignal) => void; lose: () => void}[] = []
      const next = Promise.withResolvers<void>()
      let waiting = next
      const fn = (signal: AbortSignal, onStartedLeading: (leaderSignal: AbortSignal) => void) => {
        const result = Promise.withResolvers<'lost' | 'stopped'>()
        signal.addEventListener('abort', () => result.resolve('stopped'), {once: true})
        log.push(`campaign:${campaigns.length + 1}`)
        campaigns.push({won: onStartedLeading, lose: () => result.resolve('lost')})
        const arrived = waiting
        waiting = Promise.withResolvers<void>()
        arrived.resolve()
        return result.promise
      }
      /** The n-th campaign (1-based), once it has begun. */
      const campaign = async (n: number) => {
        while (campaigns.length < n) {
          const w = waiting
          await w.promise
        }
        return campaigns[n - 1]!
      }
      return {fn, campaign}
    }

    it('on lost leadership, aborts leader-only work at once, waits for it, and campaigns again with the rest kept running; a second win starts it again', async () => {
      const election = terms()
      const manager = new Manager({logger, leaderElection: election.fn})
      const writer = new TestRunnable(log, 'writer', {needLeaderElection: true})
      const cache = new TestRunnable(log, 'cache', {group: 'caches'})
      manager.add(writer)
      manager.add(cache)
      const run = settledWith(manager.run(stop.signal))
      const first = await election.campaign(1)
      const leading = new AbortController()
      first.won(leading.signal)
      const writerSignal = await writer.started.promise
      leading.abort()
      first.lose()
      const second = await election.campaign(2)
      expect(writerSignal.aborted).to.be.true
      expect(writerSignal.reason).to.be.instanceOf(Error)
      expect(log).to.deep.equal(['start:cache', 'campaign:1', 'start:writer', 'stop:writer', 'campaign:2'])
      second.won(new AbortController().signal)
      await flushPromises()
      expect(log.filter((l) => l === 'start:writer')).to.have.length(2)
      stop.abort()
      expect(await run).to.equal('resolved')
      expect(log.slice(-2)).to.deep.equal(['stop:writer', 'stop:cache'])
    })

    it('on lost leadership with leader-only work that outlives the shutdown deadline: ends with LeadershipLostError (the process exits)', async () => {
      const clock = new FakeClock()
      const election = terms()
      const manager = new Manager({logger, leaderElection: election.fn, clock, shutdownTimeoutMs: 1_000})
      const writer = new TestRunnable(log, 'writer', {needLeaderElection: true, onAbort: 'ignore'})
      manager.add(writer)
      const run = settledWith(manager.run(stop.signal))
      const first = await election.campaign(1)
      first.won(new AbortController().signal)
      const writerSignal = await writer.started.promise
      first.lose()
      await flushPromises()
      expect(writerSignal.aborted).to.be.true
      await clock.advance(1_000)
      expect(await run).to.be.instanceOf(LeadershipLostError).and.have.property('message', 'leader election lost')
      expect(log).to.not.include('campaign:2')
      expect(logger.at('error').map((e) => e.msg).join('\n')).to.match(/did not stop within the shutdown deadline/)
    })

    it('awaits campaignWhen before each campaign, the first and each after a lost leadership', async () => {
      const election = terms()
      const gates: PromiseWithResolvers<void>[] = []
      const campaignWhen = () => {
        log.push('gate')
        const gate = Promise.withResolvers<void>()
        gates.push(gate)
        return gate.promise
      }
      const manager = new Manager({logger, leaderElection: election.fn, campaignWhen})
      manager.add(new TestRunnable(log, 'writer', {needLeaderElection: true}))
      const run = settledWith(manager.run(stop.signal))
      await flushPromises()
      expect(log).to.deep.equal(['gate'])
      gates[0]!.resolve()
      const first = await election.campaign(1)
      first.won(new AbortController().signal)
      await flushPromises()
      first.lose()
      await flushPromises()
      expect(log).to.deep.equal(['gate', 'campaign:1', 'start:writer', 'stop:writer', 'gate'])
      gates[1]!.resolve()
      await election.campaign(2)
      stop.abort()
      expect(await run).to.equal('resolved')
    })

    it('stops leader-only work when the elector aborts the leader signal', async () => {
      const elect = election()
      const manager = new Manager({logger, leaderElection: elect.fn})
      const writer = new TestRunnable(log, 'writer', {needLeaderElection: true})
      manager.add(writer)
      const run = manager.run(stop.signal)
      const leading = new AbortController()
      ;(await elect.won)(leading.signal)
      await writer.started.promise
      leading.abort()
      expect(await writer.started.promise.then((s) => s.aborted)).to.be.true
      stop.abort()
      await run
    })
  })

  it('refuses runnables once started, and a second run', async () => {
    const manager = new Manager({logger})
    const run = manager.run(stop.signal)
    expect(() => manager.add(new TestRunnable(log, 'late'))).to.throw('cannot add late: the manager has started')
    expect(await settledWith(manager.run(stop.signal))).to.have.property('message', 'the manager runs once')
    stop.abort()
    await run
  })
})
