/**
 * The real `ironpool controller` as a separate process (node bin/run.js, built from src/ when stale),
 * with metrics and probes on loopback ports of its choosing, found from its own "serving ..." log lines.
 */
import {CliProcess} from '../../test/support/cli.ts'
import {pollUntil} from './limit.ts'
import {parseProm, type Sample} from './prom-text.ts'
import {stopProcess} from './stop.ts'

const START_TIMEOUT_MS = 60_000

export class ControllerProcess {
  readonly cli: CliProcess
  private metricsUrl = ''

  /** nodeFlags: in place of bin/run.js's own (a bench's --node-flags). */
  constructor(args: readonly string[], nodeFlags?: readonly string[]) {
    this.cli = new CliProcess(['controller', '--metrics-bind-address=127.0.0.1:0', '--health-probe-bind-address=127.0.0.1:0', '--log-format=json', ...args], {}, nodeFlags)
  }

  get pid(): number {
    const pid = this.cli.child.pid
    if (pid === undefined) throw new Error('controller process has no pid')
    return pid
  }

  /** Waits for /readyz (caches synced and whole) and learns where /metrics is. */
  async ready(): Promise<void> {
    const address = async (server: string) => String((await this.cli.waitForLog(`serving ${server}`, {}, START_TIMEOUT_MS)).address)
    this.metricsUrl = `http://${await address('metrics')}/metrics`
    const readyz = `http://${await address('health-probes')}/readyz`
    const ok = await pollUntil(async () => (await fetch(readyz).catch(() => undefined))?.status === 200, START_TIMEOUT_MS)
    if (!ok) throw new Error(`controller not ready after ${START_TIMEOUT_MS / 1000}s:\n${this.cli.stderr.slice(-20).join('\n')}`)
  }

  async metrics(): Promise<Sample[]> {
    return parseProm(await (await fetch(this.metricsUrl)).text())
  }

  /** Its "pool marked Ready=Unknown" log lines: pool name and the delay it measured on its own clock. */
  marks(): {pool: string; delayMs: number}[] {
    return this.cli
      .logs()
      .filter((l) => l.msg === 'pool marked Ready=Unknown')
      .map((l) => ({pool: String(l.pool), delayMs: Number(l.delayMs)}))
  }

  stop(): Promise<void> {
    return stopProcess(this.cli)
  }
}
