/**
 * One instance of a string that many cached objects hold (issue 27). JSON.parse gives every object its
 * own copy of each value: at 100,000 pools, 100,000 copies of "HeartbeatReceived", of the poollet's
 * Ready message, of the Lease namespace, and two of every pool's name (the pool's and its Lease's).
 *
 * The intern table is bounded twice, so that values an attacker (or a buggy writer) makes unique per
 * object cannot grow it without end: only strings up to maxLength are taken, and once it holds
 * maxEntries it takes no more (what it holds is kept, never evicted: a full table costs sharing,
 * never correctness, and a value once shared stays shared). The controller interns only fields whose
 * values repeat across pools by design (condition types, statuses, reasons, messages; API versions,
 * kinds, namespaces), never times or names, so a healthy fleet needs a few dozen entries.
 */

export interface InternLimits {
  /** Strings longer than this are returned as they are. */
  maxLength: number
  /** Once this many are held, a string not held is returned as it is. */
  maxEntries: number
}

/** A few hundred bytes of text per value at most, a few hundred values: well under 1 MiB whatever arrives. */
export const INTERN_LIMITS: InternLimits = {maxLength: 256, maxEntries: 1024}

export class Interner {
  private readonly table = new Map<string, string>()
  private readonly limits: InternLimits

  constructor(limits: InternLimits = INTERN_LIMITS) {
    this.limits = limits
  }

  get size(): number {
    return this.table.size
  }

  /** The instance held for this value (taken now if there is room), or the value itself. */
  intern<T>(value: T): T {
    if (typeof value !== 'string') return value
    const held = this.table.get(value)
    if (held !== undefined) return held as T
    if (value.length > this.limits.maxLength || this.table.size >= this.limits.maxEntries) return value
    this.table.set(value, value)
    return value
  }
}

/** The interner every projection shares: one table per process. */
export const sharedStrings = new Interner()

/**
 * held when it equals value, else value: a pool's name and its Lease's name are the same text, and
 * this keeps one instance of it for both caches (and for every Map keyed by it downstream: the
 * engine's records and deadlines take the name from the objects).
 */
export function sameName(value: string, held: string | undefined): string {
  return held !== undefined && held === value ? held : value
}
