/**
 * CPU time and memory of another process, from Linux's /proc, as `top` reads them. utime+stime are
 * in clock ticks (USER_HZ, 100 on every Linux this runs on: `getconf CLK_TCK`); VmRSS and VmHWM in kB.
 */
import {readFileSync} from 'node:fs'

const USER_HZ = 100

export interface ProcSample {
  /** When sampled, performance.now() milliseconds. */
  at: number
  /** utime + stime, milliseconds. */
  cpuMs: number
  rssBytes: number
  /** Peak resident set so far. */
  hwmBytes: number
  /**
   * Of rssBytes, the process's own pages (heap, stacks, malloc) and the file-backed ones (the node
   * binary's text and data, shared with every process that runs the same binary). Undefined where
   * the kernel does not say (before Linux 4.5).
   */
  anonBytes?: number
  fileBytes?: number
}

export function sampleProc(pid: number): ProcSample {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // Fields after the command name, which sits in parentheses and may contain spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // utime and stime are fields 14 and 15 of the whole line, so 12 and 13 after "pid (comm) ".
  const ticks = Number(fields[11]) + Number(fields[12])
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024
  const optional = (key: string) => (Number.isNaN(kb(key)) ? undefined : kb(key))
  return {at: performance.now(), cpuMs: (ticks * 1000) / USER_HZ, rssBytes: kb('VmRSS'), hwmBytes: kb('VmHWM'), anonBytes: optional('RssAnon'), fileBytes: optional('RssFile')}
}

/** CPU used between two samples as a share of one core, in percent. */
export function cpuShare(from: ProcSample, to: ProcSample): number {
  return (100 * (to.cpuMs - from.cpuMs)) / (to.at - from.at)
}

export const MiB = 2 ** 20
