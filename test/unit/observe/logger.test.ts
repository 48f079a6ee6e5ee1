import {Writable} from 'node:stream'
import {expect} from 'chai'
import type {Logger} from '../../../src/core/ports.ts'
import {createLogger, resolveLogFormat} from '../../../src/observe/logger.ts'

/** A destination that keeps what was written and can wait for the next write. */
class Capture extends Writable {
  readonly chunks: string[] = []
  private waiting: (() => void) | undefined
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.chunks.push(chunk.toString())
    this.waiting?.()
    done()
  }
  /** Resolves once something has been written. */
  written(): Promise<void> {
    return this.chunks.length > 0 ? Promise.resolve() : new Promise((resolve) => (this.waiting = resolve))
  }
  lines(): Array<Record<string, unknown>> {
    return this.chunks.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>)
  }
}

describe('createLogger', () => {
  it('writes one JSON line per entry, with the level by name, the message and the fields', () => {
    const destination = new Capture()
    const logger = createLogger({format: 'json', destination})
    logger.info({pool: 'p1'}, 'lease renewed')
    const [line] = destination.lines()
    expect(line).to.include({level: 'info', msg: 'lease renewed', pool: 'p1'})
    expect(line?.time).to.be.a('string').and.match(/^\d{4}-\d\d-\d\dT/)
  })

  it('drops entries below its level', () => {
    const destination = new Capture()
    const logger = createLogger({level: 'warn', format: 'json', destination})
    logger.debug({}, 'd')
    logger.info({}, 'i')
    logger.warn({}, 'w')
    logger.error({}, 'e')
    expect(destination.lines().map((l) => [l.level, l.msg])).to.deep.equal([['warn', 'w'], ['error', 'e']])
  })

  it('writes debug entries at level debug', () => {
    const destination = new Capture()
    createLogger({level: 'debug', format: 'json', destination}).debug({n: 1}, 'detail')
    expect(destination.lines()).to.have.length(1)
  })

  it('defaults to level info', () => {
    const destination = new Capture()
    const logger = createLogger({format: 'json', destination})
    logger.debug({}, 'hidden')
    logger.info({}, 'shown')
    expect(destination.lines().map((l) => l.msg)).to.deep.equal(['shown'])
  })

  it('writes human text, not JSON, in text format', async () => {
    const destination = new Capture()
    createLogger({format: 'text', destination}).warn({pool: 'p1'}, 'probe failed')
    await destination.written()
    const text = destination.chunks.join('')
    expect(text).to.include('WARN').and.include('probe failed').and.include('pool: "p1"')
    expect(() => JSON.parse(text) as unknown).to.throw()
  })

  it('auto is text on a terminal and JSON elsewhere; an explicit format wins', () => {
    expect(resolveLogFormat('auto', true)).to.equal('text')
    expect(resolveLogFormat('auto', false)).to.equal('json')
    expect(resolveLogFormat('json', true)).to.equal('json')
    expect(resolveLogFormat('text', false)).to.equal('text')
  })

  it('auto writes JSON when the destination is not a terminal', () => {
    const destination = new Capture()
    createLogger({format: 'auto', isTTY: false, destination}).info({}, 'x')
    expect(destination.lines()[0]).to.include({msg: 'x'})
  })

  it('serves as the core Logger port', () => {
    const destination = new Capture()
    const port: Logger = createLogger({format: 'json', destination})
    port.error({err: 'boom'}, 'failed')
    expect(destination.lines()[0]).to.include({level: 'error', err: 'boom'})
  })
})
