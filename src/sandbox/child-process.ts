/**
 * One `ironpool <command>` of the sandbox as its own process (bin/run.js with its Node flags, the way a
 * Deployment runs it), in its own process group with its log in a file: the control plane's ManagedProcess, plus
 * what the sandbox does to a process that a Deployment never does — freeze it and thaw it.
 * Every group is registered with the control plane's reaper, so a crashed sandbox leaves none behind.
 */
import path from 'node:path'
import {ironpoolCommand} from '../cli/ironpool-process.ts'
import type {ControlPlane} from '../controlplane/control-plane.ts'
import {ManagedProcess} from '../controlplane/process.ts'

export type ChildState = 'running' | 'frozen' | 'stopped' | 'exited'

export class SandboxChild {
  readonly name: string
  private readonly process: ManagedProcess
  private readonly plane: ControlPlane
  private frozen = false
  private wanted = false

  constructor(options: {name: string; args: readonly string[]; logDir: string; plane: ControlPlane}) {
    this.name = options.name
    this.plane = options.plane
    const {command, args} = ironpoolCommand(options.args)
    this.process = new ManagedProcess({
      name: options.name,
      command,
      args,
      logFile: path.join(options.logDir, `${options.name}.log`),
      onStart: (pid) => options.plane.registerProcessGroup(pid),
    })
  }

  get pid(): number | undefined {
    return this.process.running ? this.process.pid : undefined
  }

  get logFile(): string {
    return this.process.logFile
  }

  /** 'exited' when it ended without being asked to: a crash, shown as such rather than as a stop. */
  get state(): ChildState {
    if (!this.process.running) return this.wanted ? 'exited' : 'stopped'
    return this.frozen ? 'frozen' : 'running'
  }

  start(): void {
    if (this.process.running) return
    this.wanted = true
    this.frozen = false
    this.process.start()
  }

  /** SIGSTOP to the group: the process keeps its sockets and Lease but says nothing, like a hung node. */
  freeze(): void {
    if (this.signal('SIGSTOP')) this.frozen = true
  }

  thaw(): void {
    if (this.signal('SIGCONT')) this.frozen = false
  }

  /**
   * SIGTERM, then SIGKILL after ManagedProcess's deadline; a frozen process gets SIGCONT first, since a
   * stopped process cannot act on SIGTERM and would only die by the SIGKILL.
   */
  async stop(): Promise<void> {
    this.wanted = false
    const pid = this.process.pid
    if (this.frozen) this.thaw()
    await this.process.stop()
    if (pid !== undefined) this.plane.forgetProcessGroup(pid)
  }

  private signal(signal: NodeJS.Signals): boolean {
    const pid = this.process.pid
    if (!this.process.running || pid === undefined) return false
    try {
      process.kill(-pid, signal)
      return true
    } catch {
      return false
    }
  }
}
