/**
 * One fault scenario, the same steps and assertions for every fault: freeze one poollet, inject the
 * fault for two grace periods, end it; then no live pool was ever Unknown, the frozen pool was marked
 * after the view was whole again (within one grace period plus the stated bound), and the controller is
 * still the same running process.
 */
import {expect} from 'chai'
import {GRACE_MS, hold, type FaultFleet} from './fault-fleet.ts'

export interface Fault {
  /** Slow set-up that is not yet the fault, run before the frozen poollet is frozen (its clock starts). */
  setUp?(): void | Promise<void>
  start(): void | Promise<void>
  end(): void | Promise<void>
  /** Whether the controller must see itself blind (a view-not-whole spell) through this fault. Default true. */
  blinds?: boolean
  /** The reason the blind spell must begin with, when the fault targets one guard. */
  reason?: string
  /** Live pools that may rightly go Unknown: their own renewals stopped for longer than the grace period. */
  mayGoUnknown?: readonly string[]
}

/** Where the scenario began, in the fleet's timeline and the controller's log, for checks of its own. */
export interface ScenarioStart {
  seq: number
  log: number
}

export async function runScenario(fleet: FaultFleet, fault: Fault): Promise<ScenarioStart> {
  await fault.setUp?.()
  await fleet.prepare()
  const fromSeq = fleet.mark('frozen')
  const fromLog = fleet.logPosition()
  try {
    await fault.start()
    await hold(2 * GRACE_MS)
  } finally {
    await fault.end()
  }
  fleet.mark('fault ended')
  try {
    if (fault.blinds ?? true) {
      const {blind, whole} = await fleet.viewWholeAgain(fromLog)
      if (fault.reason !== undefined) expect(blind.fields.reason, 'the guard that saw the fault').to.equal(fault.reason)
      const marked = await fleet.frozenMarked(fromLog)
      console.log(`      blind from ${String(blind.fields.reason)} (${JSON.stringify(whole.fields.reasons)}) for ${String(whole.fields.blindMs)} ms; the frozen pool marked ${String(marked.fields.delayMs)} ms past its deadline`)
      // Order: the mark follows the end of the blindness, never comes while blind.
      expect(marked.index, 'the frozen pool marked only once the view was whole again').to.be.above(whole.index)
    } else {
      await fleet.frozenMarked(fromLog)
    }
    await fleet.settle()
    expect(fleet.falseUnknowns(fromSeq, fromLog, fault.mayGoUnknown)).to.deep.equal([])
    expect(fleet.controllerExit(), 'the controller still runs (no crash, no restart)').to.equal(undefined)
    return {seq: fromSeq, log: fromLog}
  } catch (error) {
    console.log(`      --- controller log (last lines):\n${fleet.controllerTail()}`)
    throw error
  }
}
