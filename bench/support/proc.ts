/**
 * CPU time and memory of another process, from Linux's /proc, as `top` reads them. VmRSS and VmHWM
 * are in kB. CPU time is the scheduler's own count, in nanoseconds, of each of the process's threads
 * (/proc/<pid>/task/<tid>/schedstat), summed: utime+stime count in clock ticks (USER_HZ, 100: 10 ms),
 * too coarse for a poollet that spends a few milliseconds every 10 s (18 ticks of ~5 ms are 90 ms,
 * read to ±10 ms). A thread that has exited is no longer counted there, so where the sum falls below
 * utime+stime (a process whose threads come and go), utime+stime is taken. Node's threads (V8's
 * platform workers, libuv's pool) live as long as the process.
 */
import {readFileSync, readdirSync} from 'node:fs'

const USER_HZ = 100

export interface ProcSample {
  /** When sampled, performance.now() milliseconds. */
  at: number
  /** CPU time of all its threads, milliseconds (see above). */
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
  const statMs = (ticks * 1000) / USER_HZ
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024
  const optional = (key: string) => (Number.isNaN(kb(key)) ? undefined : kb(key))
  return {at: performance.now(), cpuMs: Math.max(statMs, threadsCpuMs(pid) ?? 0), rssBytes: kb('VmRSS'), hwmBytes: kb('VmHWM'), anonBytes: optional('RssAnon'), fileBytes: optional('RssFile')}
}

/** CPU used between two samples as a share of one core, in percent. */
export function cpuShare(from: ProcSample, to: ProcSample): number {
  return (100 * (to.cpuMs - from.cpuMs)) / (to.at - from.at)
}

export const MiB = 2 ** 20

/** The sum of the scheduler's run time of each thread of pid, in ms; undefined where /proc has no schedstat. */
function threadsCpuMs(pid: number): number | undefined {
  let ns = 0
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
      } catch {
        // The thread exited between the listing and the read.
      }
    }
  } catch {
    return undefined
  }
  return Number.isFinite(ns) && ns > 0 ? ns / 1e6 : undefined
}
