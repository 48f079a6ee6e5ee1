/**
 * Pools and Leases for the operator tools' tests, created as admin on the shared control plane: for each
 * kind a True, a False and an Unknown pool, labelled with this run's id so that a selector shows only
 * them (other suites share the control plane). Each pool keeps the moments its Ready changed and its
 * Lease was renewed, so that a test can tell the ages a command may print from when it ran
 * (agesBetween), however long the machine took to get there.
 */
import {V1MicroTime} from '@kubernetes/client-node'
import {randomBytes} from 'node:crypto'
import {readFile, writeFile} from 'node:fs/promises'
import {createServer} from 'node:net'
import type {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {POOL_KIND_NAMES, POOL_KINDS, type PoolKind} from '../../../src/core/pool-kinds.ts'
import {formatAge} from '../../../src/core/lifecycle/reading/pool-view.ts'
import type {ConditionStatus} from '../../../src/core/types.ts'
import {KubeObjects} from '../../support/kube-objects.ts'
import {poolletControlPlane} from '../../support/poollet-env.ts'

export interface ToolPool {
  kind: PoolKind
  name: string
  status: ConditionStatus
  reason: string
  message: string
  holder?: string
  /** 'no' for a fresh Lease, 'yes' for one renewed ten minutes ago with a 40s duration. */
  expired: 'no' | 'yes'
  /** When Ready last changed, ms since the epoch, as the API keeps it (whole seconds). */
  transitionAt: number
  /** When the Lease was renewed, ms since the epoch (a MicroTime keeps the milliseconds). */
  renewedAt: number
  /** When the Lease expires, ms since the epoch. */
  expiresAt: number
}

export interface ToolsWorld {
  plane: ControlPlane
  admin: KubeObjects
  /** Label selector matching this run's pools only. */
  selector: string
  pools: ToolPool[]
}

const MINUTE = 60_000
/** Ready last changed five minutes ago; a fresh Lease was renewed 30 s ago and lasts an hour. */
export const TRANSITION_AGO_MS = 5 * MINUTE

function conditionFor(kind: PoolKind, status: ConditionStatus): {reason: string; message: string} {
  if (status === 'True') return {reason: 'HeartbeatReceived', message: kind.readyMessage}
  if (status === 'False') return {reason: 'RuntimeUnreachable', message: 'dial unix /run/iri.sock: connect: no such file or directory'}
  return {reason: kind.unknownReason, message: kind.unknownMessage}
}

/** Nine pools (three per kind), each with its Lease; names start with tools-<run>-. */
export async function createToolsWorld(): Promise<ToolsWorld> {
  const plane = await poolletControlPlane()
  const admin = new KubeObjects(plane.adminKubeconfig)
  const run = randomBytes(3).toString('hex')
  const pools: ToolPool[] = []
  const now = Date.now()
  for (const kindName of POOL_KIND_NAMES) {
    const kind = POOL_KINDS[kindName]
    for (const status of ['True', 'False', 'Unknown'] as const) {
      const name = `tools-${run}-${kindName[0]}-${status.toLowerCase()}`
      const {reason, message} = conditionFor(kind, status)
      await admin.createPool(kind, name)
      await admin.patchPool(kind, name, {metadata: {labels: {'tools-run': run, 'tools-ready': status}}})
      // metav1.Time holds whole seconds: the API server drops the milliseconds.
      const transitionAt = Math.floor((now - TRANSITION_AGO_MS) / 1000) * 1000
      const at = new Date(transitionAt).toISOString()
      await admin.setConditions(kind, name, [{type: 'Ready', status, reason, message, lastUpdateTime: at, lastTransitionTime: at}])
      const expired = status === 'Unknown' ? 'yes' : 'no'
      const holder = `${name}_0b9e1d8c`
      const renewedAt = now - (expired === 'yes' ? 10 * MINUTE : 30_000)
      const leaseDurationSeconds = expired === 'yes' ? 40 : 3600
      await admin.createLease(kind, name, {
        holderIdentity: holder,
        leaseDurationSeconds,
        acquireTime: new V1MicroTime(now - 20 * MINUTE),
        renewTime: new V1MicroTime(renewedAt),
        leaseTransitions: 1,
      })
      pools.push({kind, name, status, reason, message, holder, expired, transitionAt, renewedAt, expiresAt: renewedAt + leaseDurationSeconds * 1000})
    }
  }
  return {plane, admin, selector: `tools-run=${run}`, pools}
}

/** When a command ran: it read its clock somewhere in [from, to] (ms since the epoch). */
export interface RunWindow {
  from: number
  to: number
}

/** Runs a command and says when it ran. */
export async function timed<T>(run: () => Promise<T>): Promise<{result: T; window: RunWindow}> {
  const from = Date.now()
  const result = await run()
  return {result, window: {from, to: Date.now()}}
}

/**
 * Every age (formatAge, kubectl's format) a command that ran in window may print for the moment `at`:
 * its clock read anywhere in the window, however slow the machine was. `until` instead: the time left
 * until `at` (an expiry).
 */
export function agesBetween(at: number, window: RunWindow, direction: 'since' | 'until' = 'since'): string[] {
  const [lo, hi] = direction === 'since' ? [window.from - at, window.to - at] : [at - window.to, at - window.from]
  const ages = new Set<string>()
  for (let s = Math.floor(lo / 1000); s <= Math.ceil(hi / 1000); s++) ages.add(formatAge(s * 1000))
  return [...ages]
}

/** A port nothing listens on: bound once by us, then closed. */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise((resolve) => server.close(resolve))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** A kubeconfig like the admin's, but pointing at a closed port. */
export async function unreachableKubeconfig(plane: ControlPlane, path: string): Promise<string> {
  const text = await readFile(plane.adminKubeconfig, 'utf8')
  await writeFile(path, text.replace(/server: \S+/g, `server: https://127.0.0.1:${await closedPort()}`))
  return path
}

/** A table's lines split into cells (columns are three or more spaces apart; no value holds three). */
export function tableRows(stdout: string): string[][] {
  return stdout.split('\n').filter((line) => line.trim() !== '').map((line) => line.split(/ {3,}/))
}
