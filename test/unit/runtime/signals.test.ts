import {EventEmitter} from 'node:events'
import {expect} from 'chai'
import {setupSignalHandler, type SignalProcess} from '../../../src/runtime/signals.ts'
import {FakeLogger} from '../../support/fake-logger.ts'

/** A process whose signals the test sends and whose exit is recorded instead of taken. */
class FakeProcess extends EventEmitter implements SignalProcess {
  readonly exits: number[] = []
  exit(code: number): void {
    this.exits.push(code)
  }
}

describe('setupSignalHandler', () => {
  for (const name of ['SIGTERM', 'SIGINT'] as const) {
    it(`aborts on the first ${name} without exiting`, () => {
      const proc = new FakeProcess()
      const handler = setupSignalHandler({process: proc})
      expect(handler.signal.aborted).to.be.false
      proc.emit(name, name)
      expect(handler.signal.aborted).to.be.true
      expect((handler.signal.reason as Error).message).to.equal(`received ${name}`)
      expect(proc.exits).to.deep.equal([])
    })
  }

  it('exits with code 1 on the second signal', () => {
    const proc = new FakeProcess()
    const logger = new FakeLogger()
    setupSignalHandler({process: proc, logger})
    proc.emit('SIGTERM', 'SIGTERM')
    proc.emit('SIGINT', 'SIGINT')
    expect(proc.exits).to.deep.equal([1])
    expect(logger.at('warn').map((e) => e.msg)).to.deep.equal(['second signal: exiting at once'])
  })

  it('stops listening once disposed', () => {
    const proc = new FakeProcess()
    const handler = setupSignalHandler({process: proc})
    handler.dispose()
    expect(proc.listenerCount('SIGTERM') + proc.listenerCount('SIGINT')).to.equal(0)
  })

  it('listens on the real process by default', () => {
    const before = process.listenerCount('SIGTERM')
    const handler = setupSignalHandler()
    expect(process.listenerCount('SIGTERM')).to.equal(before + 1)
    handler.dispose()
    expect(process.listenerCount('SIGTERM')).to.equal(before)
  })
})
