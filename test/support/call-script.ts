/**
 * Scripts a fake's calls, as the Kubernetes lease tests do with reactors: count every call per verb,
 * fail the Nth call with a given error, run a function before the Nth call (e.g. another writer moving
 * the object), and fail hard when a call must not happen at all.
 *
 * A forbidden call throws, but the code under test may catch that (the heartbeat logs every error), so
 * it is also raised as an uncaught exception on the next tick, which fails the running mocha test.
 */
type Step = Error | (() => void) | (() => Error)

export class CallScript<Verb extends string> {
  private readonly counts = new Map<Verb, number>()
  private readonly steps = new Map<string, Step>()
  private readonly forbidden = new Set<Verb>()
  /** Every call in order, e.g. ["get", "update"]. */
  readonly log: Verb[] = []

  /** How many times verb was called. */
  calls(verb: Verb): number {
    return this.counts.get(verb) ?? 0
  }

  /** The nth call of verb (1-based, counted from the fake's creation) throws error. */
  failOn(verb: Verb, nth: number, error: Error): this {
    this.steps.set(`${verb}#${nth}`, error)
    return this
  }

  /** The next `times` calls of verb throw a fresh error each from makeError. */
  failNext(verb: Verb, makeError: () => Error, times = 1): this {
    const from = this.calls(verb) + 1
    for (let nth = from; nth < from + times; nth++) this.steps.set(`${verb}#${nth}`, () => makeError())
    return this
  }

  /** Calls of verb from now on no longer fail (what failNext or failOn scripted ahead is dropped). */
  stopFailing(verb: Verb): this {
    for (const key of [...this.steps.keys()]) if (key.startsWith(`${verb}#`) && Number(key.slice(verb.length + 1)) > this.calls(verb)) this.steps.delete(key)
    return this
  }

  /** Runs fn just before the nth call of verb does its work. */
  beforeCall(verb: Verb, nth: number, fn: () => void): this {
    this.steps.set(`${verb}#${nth}`, fn)
    return this
  }

  /** From now on, any call of verb fails the test. */
  forbid(...verbs: Verb[]): this {
    for (const verb of verbs) this.forbidden.add(verb)
    return this
  }

  allow(...verbs: Verb[]): this {
    for (const verb of verbs) this.forbidden.delete(verb)
    return this
  }

  /** Called by the fake at the start of each call: counts it, then fails or runs what was scripted. */
  enter(verb: Verb): void {
    const nth = this.calls(verb) + 1
    this.counts.set(verb, nth)
    this.log.push(verb)
    if (this.forbidden.has(verb)) {
      const violation = new Error(`forbidden call: ${verb} (call #${nth}) must not happen here`)
      process.nextTick(() => {
        throw violation
      })
      throw violation
    }
    const step = this.steps.get(`${verb}#${nth}`)
    if (step === undefined) return
    if (step instanceof Error) throw step
    const made = step()
    if (made instanceof Error) throw made
  }
}
