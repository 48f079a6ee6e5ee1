import {expect} from 'chai'
import {ListWatchCache, ROUTINE_STREAM_MS, type CacheEvent, type ListWatchCacheOptions} from '../../../../src/kube/watch/list-watch-cache.ts'
import {FakeClock, flushPromises} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'
import {FakeLister, FakeWatcher, obj, type Obj} from './list-watch-fakes.ts'

const WATCHDOG = 120_000
const RELIST = 600_000
/** random() = 0: every backoff delay is exactly its base (200 ms, 400 ms, ...). */
const FIRST_BACKOFF = 200

function setup(objects: Obj[] = [], options: Partial<ListWatchCacheOptions<Obj>> = {}) {
  const clock = new FakeClock()
  const lister = new FakeLister(...objects)
  const watcher = new FakeWatcher()
  const logger = new FakeLogger()
  const counted: string[] = []
  const cache = new ListWatchCache<Obj>({
    resource: 'things',
    list: lister.list,
    watch: watcher.watch,
    logger,
    clock,
    random: () => 0,
    watchdogMs: WATCHDOG,
    relistIntervalMs: RELIST,
    observer: {relist: (r) => counted.push(`relist:${r}`), watchRestart: (r) => counted.push(`restart:${r}`)},
    ...options,
  })
  const events: CacheEvent<Obj>[] = []
  cache.onEvent((e) => events.push(e))
  const health: string[] = []
  cache.onHealth((whole, reason) => health.push(`${whole}:${reason}`))
  const controller = new AbortController()
  const running = cache.start(controller.signal)
  const stop = async () => {
    controller.abort()
    await running
  }
  return {clock, lister, watcher, logger, counted, cache, events, health, stop}
}

describe('ListWatchCache (fake lister and watcher, fake clock)', () => {
  it('lists, then watches from the list resourceVersion with the store filled; whole only once watching', async () => {
    const t = setup([obj('a', '10'), obj('b', '11')])
    await flushPromises()
    expect(t.cache.isWhole()).to.be.true
    expect(t.watcher.opened.map((w) => w.resourceVersion)).to.deep.equal(['100'])
    expect(t.cache.list().map((o) => o.metadata.name)).to.deep.equal(['a', 'b'])
    expect(t.events.map((e) => `${e.type} ${e.key}`)).to.deep.equal(['upsert a', 'upsert b'])
    expect(t.health).to.deep.equal(['true:watching'])
    await t.cache.waitForSync()
    await t.stop()
  })

  it('follows every page of a paginated list and resumes from the first page resourceVersion', async () => {
    const t = setup([obj('a', '1'), obj('b', '2'), obj('c', '3')], {pageSize: 2})
    await flushPromises()
    expect(t.lister.calls).to.equal(2)
    expect(t.cache.size).to.equal(3)
    await t.stop()
  })

  it('applies ADDED, MODIFIED and DELETED and remembers their resourceVersion; a bookmark moves it without an event', async () => {
    const t = setup([obj('a', '10')])
    await flushPromises()
    t.events.length = 0
    t.watcher.send('ADDED', obj('b', '101'))
    t.watcher.send('MODIFIED', obj('a', '102', 'x'))
    t.watcher.send('DELETED', obj('b', '103'))
    expect(t.events).to.deep.equal([
      {type: 'upsert', key: 'b', object: obj('b', '101')},
      {type: 'upsert', key: 'a', object: obj('a', '102', 'x'), old: obj('a', '10')},
      {type: 'delete', key: 'b', object: obj('b', '101')},
    ])
    t.watcher.send('BOOKMARK', {metadata: {resourceVersion: '250'}})
    expect(t.cache.resourceVersion).to.equal('250')
    expect(t.events).to.have.length(3)
    expect(t.cache.get('a')?.spec?.value).to.equal('x')
    await t.stop()
  })

  it('an ERROR event 410 Gone relists after backoff, reports what changed meanwhile and watches from the new list, whole throughout a quick gap', async () => {
    const t = setup([obj('a', '10'), obj('b', '11')])
    await flushPromises()
    t.events.length = 0
    t.lister.set(obj('a', '10'), obj('c', '12'))
    t.lister.resourceVersion = '300'
    t.watcher.send('ERROR', {kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version'})
    expect(t.watcher.current.aborted).to.be.true
    await t.clock.advance(FIRST_BACKOFF)
    expect(t.lister.calls).to.equal(2)
    expect(t.events.map((e) => `${e.type} ${e.key}`)).to.deep.equal(['delete b', 'upsert c'])
    expect(t.watcher.current.resourceVersion).to.equal('300')
    expect(t.cache.isWhole()).to.be.true
    expect(t.counted).to.deep.equal(['relist:initial', 'restart:gone', 'relist:gone'])
    expect(t.health).to.deep.equal(['true:watching'])
    await t.stop()
  })

  it('an HTTP 410 when the watch opens also relists', async () => {
    const t = setup([obj('a', '10')])
    t.watcher.failures.push(Object.assign(new Error('Gone'), {statusCode: 410}))
    await flushPromises()
    expect(t.cache.isWhole(), 'never whole before its first watch').to.be.false
    expect(t.cache.synced).to.be.false
    await t.clock.advance(FIRST_BACKOFF)
    expect(t.lister.calls).to.equal(2)
    expect(t.cache.isWhole()).to.be.true
    await t.stop()
  })

  it('a broken stream reopens from the last resourceVersion after backoff, without a list; a quick gap is no blindness', async () => {
    const t = setup([obj('a', '10')])
    await flushPromises()
    t.watcher.send('MODIFIED', obj('a', '120'))
    t.watcher.current.callbacks.done(new Error('socket hang up'))
    expect(t.cache.isWhole()).to.be.true
    await t.clock.advance(FIRST_BACKOFF - 1)
    expect(t.watcher.opened).to.have.length(1)
    await t.clock.advance(1)
    expect(t.watcher.opened.map((w) => w.resourceVersion)).to.deep.equal(['100', '120'])
    expect(t.lister.calls).to.equal(1)
    expect(t.health).to.deep.equal(['true:watching'])
    await t.stop()
  })

  it('a gap between streams longer than gapToleranceMs is blindness until a stream is established again', async () => {
    const t = setup([obj('a', '10')], {gapToleranceMs: 1000})
    await flushPromises()
    expect(t.cache.synced).to.be.true
    t.watcher.hangNext = true
    t.watcher.current.callbacks.done(null)
    // Reopened (after a backoff: the stream was young), but the server never answers.
    await t.clock.advance(999)
    expect(t.cache.isWhole()).to.be.true
    await t.clock.advance(1)
    expect(t.cache.isWhole()).to.be.false
    expect(t.health.at(-1)).to.match(/^false:.*for more than 1000 ms$/)
    t.watcher.answerHung()
    await flushPromises()
    expect(t.cache.isWhole()).to.be.true
    expect(t.health).to.have.length(3)
    await t.stop()
  })

  it('a periodic relist that hangs is blindness once it outlasts the gap tolerance', async () => {
    const t = setup([obj('a', '10')], {gapToleranceMs: 1000, watchdogMs: 2 * RELIST})
    await flushPromises()
    t.lister.hangNext = true
    await t.clock.advance(RELIST)
    expect(t.lister.calls).to.equal(2)
    expect(t.cache.isWhole()).to.be.true
    await t.clock.advance(1000)
    expect(t.cache.isWhole()).to.be.false
    expect(t.health.at(-1)).to.match(/^false:periodic relist, for more than 1000 ms$/)
    await t.stop()
  })

  it('a watch that cannot be reopened leads to a relist, with backoff growing while it fails', async () => {
    const t = setup([obj('a', '10')])
    await flushPromises()
    t.watcher.failures.push(new Error('ECONNREFUSED'))
    t.lister.failures.push(new Error('ECONNREFUSED'))
    t.watcher.current.callbacks.done(new Error('socket hang up'))
    await t.clock.advance(200) // reopen: refused
    expect(t.watcher.opened).to.have.length(2)
    await t.clock.advance(400) // relist: fails
    expect(t.lister.calls).to.equal(2)
    expect(t.cache.isWhole(), 'still within the gap tolerance').to.be.true
    await t.clock.advance(799)
    expect(t.lister.calls).to.equal(2)
    await t.clock.advance(1) // relist: succeeds, watch opens
    expect(t.lister.calls).to.equal(3)
    expect(t.cache.isWhole()).to.be.true
    expect(t.counted).to.deep.equal(['relist:initial', 'restart:error', 'restart:refused', 'relist:watch refused', 'relist:watch refused'])
    expect(t.logger.at('warn').map((e) => e.msg)).to.include('list failed; retrying after backoff')
    await t.stop()
  })

  it('a stream the server closes cleanly is reopened from the last resourceVersion and the cache stays whole', async () => {
    const t = setup([obj('a', '10')])
    await flushPromises()
    t.watcher.send('BOOKMARK', {metadata: {resourceVersion: '150'}})
    t.watcher.current.callbacks.done(null)
    expect(t.cache.isWhole()).to.be.true
    await t.clock.advance(FIRST_BACKOFF)
    expect(t.watcher.opened.map((w) => w.resourceVersion)).to.deep.equal(['100', '150'])
    expect(t.health).to.deep.equal(['true:watching'])
    await t.stop()
  })

  it('reopens at once, without a growing backoff, each stream the server ends cleanly after a while (its watch timeout)', async () => {
    const t = setup([obj('a', '10')])
    await flushPromises()
    for (let i = 1; i <= 5; i++) {
      await t.clock.advance(ROUTINE_STREAM_MS)
      t.watcher.current.callbacks.done(null)
      await flushPromises()
      expect(t.watcher.opened, `close ${i}`).to.have.length(i + 1)
      expect(t.watcher.live).to.have.length(1)
    }
    expect(t.health).to.deep.equal(['true:watching'])
    await t.stop()
  })

  it('backs off when the server ends streams cleanly right after opening them', async () => {
    const t = setup([obj('a', '10')])
    await flushPromises()
    t.watcher.current.callbacks.done(null)
    await flushPromises()
    expect(t.watcher.opened).to.have.length(1)
    await t.clock.advance(FIRST_BACKOFF)
    expect(t.watcher.opened).to.have.length(2)
    await t.stop()
  })

  it('the watchdog restarts a stream silent for watchdogMs; any event or bookmark feeds it', async () => {
    const t = setup([obj('a', '10')])
    await flushPromises()
    await t.clock.advance(WATCHDOG - 1)
    t.watcher.send('BOOKMARK', {metadata: {resourceVersion: '101'}})
    await t.clock.advance(WATCHDOG - 1)
    expect(t.watcher.opened).to.have.length(1)
    expect(t.cache.isWhole()).to.be.true
    await t.clock.advance(1)
    expect(t.watcher.opened[0]?.aborted).to.be.true
    expect(t.cache.isWhole()).to.be.false
    expect(t.counted).to.include('restart:watchdog')
    await t.clock.advance(FIRST_BACKOFF)
    expect(t.watcher.opened.map((w) => w.resourceVersion)).to.deep.equal(['100', '101'])
    expect(t.watcher.live).to.have.length(1)
    expect(t.cache.isWhole()).to.be.true
    await t.stop()
  })

  it('relists every relistIntervalMs, reconciling the store, and stays whole through it', async () => {
    const t = setup([obj('a', '10'), obj('b', '11')], {watchdogMs: 2 * RELIST})
    await flushPromises()
    t.events.length = 0
    // Changes the watch never delivered (a lost event): only the relist can find them.
    t.lister.set(obj('a', '20'), obj('c', '21'))
    await t.clock.advance(RELIST - 1)
    expect(t.lister.calls).to.equal(1)
    await t.clock.advance(1)
    expect(t.lister.calls).to.equal(2)
    expect(t.events.map((e) => `${e.type} ${e.key}`)).to.deep.equal(['delete b', 'upsert a', 'upsert c'])
    // A reconciliation of a healthy view is not blindness: the controller's guard must not restart grace.
    expect(t.health).to.deep.equal(['true:watching'])
    expect(t.watcher.live).to.have.length(1)
    await t.stop()
  })

  it('a long periodic relist whose pages keep coming is no blindness (20k Leases, 40 pages of 500, 500 ms each); a page that stalls is', async () => {
    const objects = Array.from({length: 20_000}, (_, i) => obj(`lease-${i}`, String(10 + i)))
    const clock = new FakeClock()
    const lister = new FakeLister(...objects)
    // Each page takes 500 ms: the whole list 20 s, far past the gap tolerance of 3 s.
    let stallAt: number | undefined = undefined
    const slowList: typeof lister.list = (page) => {
      const answer = lister.list(page)
      const delay = stallAt !== undefined && lister.calls === stallAt ? 5000 : 500
      return new Promise((resolve) => clock.setTimer(delay, () => resolve(answer)))
    }
    const watcher = new FakeWatcher()
    const health: string[] = []
    const cache = new ListWatchCache<Obj>({resource: 'leases', list: slowList, watch: watcher.watch, logger: new FakeLogger(), clock, random: () => 0, watchdogMs: 2 * RELIST, relistIntervalMs: RELIST, gapToleranceMs: 3000})
    cache.onHealth((whole, reason) => health.push(`${whole}:${reason}`))
    const controller = new AbortController()
    const running = cache.start(controller.signal)
    await clock.advance(40 * 500)
    expect(cache.size).to.equal(20_000)
    expect(health).to.deep.equal(['true:watching'])
    // The periodic relist starts at 620 s and lasts 20 s.
    await clock.advance(RELIST + 1000)
    expect(lister.calls).to.equal(43)
    // A relist asked for while one runs would only repeat it.
    cache.requestRelist('a confirming read found a renewal the watch had not delivered')
    await clock.advance(19_000)
    expect(lister.calls).to.equal(80)
    expect(health, 'the periodic relist: no gap').to.deep.equal(['true:watching'])
    watcher.current.callbacks.done(null)
    await clock.advance(1000)
    expect(lister.calls, 'the stream reopened, no relist repeated').to.equal(80)
    // The next periodic relist (at 1240 s) stalls on its tenth page for 5 s: a gap past the tolerance.
    stallAt = 90
    await clock.advance(RELIST + 30_000)
    expect(lister.calls).to.equal(120)
    expect(health).to.deep.equal(['true:watching', 'false:periodic relist, for more than 3000 ms', 'true:watching after a relist'])
    controller.abort()
    await running
  })

  it('relistIntervalMs 0 never relists', async () => {
    const t = setup([obj('a', '10')], {relistIntervalMs: 0, watchdogMs: 10 * RELIST})
    await flushPromises()
    await t.clock.advance(5 * RELIST)
    expect(t.lister.calls).to.equal(1)
    await t.stop()
  })

  it('an invalid object is logged once with the field at fault and left out; turning invalid removes the old version', async () => {
    const validate = (o: Obj) => (o.spec?.value === 'bad' ? {ok: false as const, field: '/spec/value', problem: 'must not be bad'} : {ok: true as const})
    const t = setup([obj('a', '10'), obj('b', '11', 'bad')], {validate})
    await flushPromises()
    expect(t.cache.list().map((o) => o.metadata.name)).to.deep.equal(['a'])
    t.watcher.send('MODIFIED', obj('b', '12', 'bad'))
    t.watcher.send('MODIFIED', obj('a', '13', 'bad'))
    expect(t.cache.size).to.equal(0)
    expect(t.events.map((e) => `${e.type} ${e.key}`)).to.deep.equal(['upsert a', 'delete a'])
    const warnings = t.logger.at('warn')
    expect(warnings.map((w) => w.obj.key)).to.deep.equal(['b', 'a'])
    expect(warnings[0]?.obj).to.include({field: '/spec/value', problem: 'must not be bad'})
    t.watcher.send('MODIFIED', obj('a', '14'))
    expect(t.cache.get('a')?.metadata.resourceVersion).to.equal('14')
    await t.stop()
  })

  it('a handler that throws is logged; other handlers and the cache carry on', async () => {
    const t = setup()
    await flushPromises()
    t.cache.onEvent(() => {
      throw new Error('handler bug')
    })
    const seen: string[] = []
    t.cache.onEvent((e) => seen.push(e.key))
    t.watcher.send('ADDED', obj('a', '101'))
    t.watcher.send('ADDED', obj('b', '102'))
    expect(seen).to.deep.equal(['a', 'b'])
    expect(t.logger.at('error').map((e) => e.obj.error)).to.deep.equal(['handler bug', 'handler bug'])
    expect(t.cache.isWhole()).to.be.true
    await t.stop()
  })

  it('stop aborts the watch, cancels every timer and resolves; nothing happens afterwards', async () => {
    const t = setup([obj('a', '10')])
    await flushPromises()
    await t.stop()
    expect(t.watcher.current.aborted).to.be.true
    expect(t.clock.pending, 'timers left').to.equal(0)
    expect(t.cache.isWhole()).to.be.false
    await t.clock.advance(10 * RELIST)
    expect(t.lister.calls).to.equal(1)
    expect(t.watcher.opened).to.have.length(1)
  })

  it('stop during a backoff pause resolves at once and leaves no timer', async () => {
    const t = setup([obj('a', '10')])
    t.watcher.failures.push(new Error('ECONNREFUSED'))
    await flushPromises()
    expect(t.clock.pending).to.be.greaterThan(0)
    await t.stop()
    expect(t.clock.pending).to.equal(0)
  })

  it('waitForSync rejects when its signal aborts before the cache is whole', async () => {
    const t = setup()
    t.lister.failures.push(new Error('down'))
    const controller = new AbortController()
    const waiting = t.cache.waitForSync(controller.signal)
    controller.abort(new Error('gave up'))
    let caught: unknown
    await waiting.catch((error: unknown) => (caught = error))
    expect((caught as Error).message).to.equal('gave up')
    await t.stop()
  })
})

describe('watch timeouts of the resource caches', () => {
  it('end each watch on the server side before the watchdog could fire, jittered between half and three quarters of it', async () => {
    const {watchTimeoutSeconds} = await import('../../../../src/kube/watch/caches/resource-caches.ts')
    expect(watchTimeoutSeconds(() => 0)).to.equal(60)
    expect(watchTimeoutSeconds(() => 0.999)).to.equal(90)
    expect(watchTimeoutSeconds(() => 0.999) * 1000).to.be.below(WATCHDOG)
  })
})
