/**
 * Pools and Leases for the operator tools' tests, created as admin on the shared control plane: for each
 * kind a True, a False and an Unknown pool, labelled with this run's id so that a selector shows only
 * them (other suites share the control plane). Times are chosen so that the ages are known to the minute.
 */
import {V1MicroTime} from '@kubernetes/client-node'
import {randomBytes} from 'node:crypto'
import {readFile, writeFile} from 'node:fs/promises'
import {createServer} from 'node:net'
import type {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {POOL_KIND_NAMES, POOL_KINDS, type PoolKind} from '../../../src/core/pool-kinds.ts'
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
      const at = new Date(now - TRANSITION_AGO_MS).toISOString()
      await admin.setConditions(kind, name, [{type: 'Ready', status, reason, message, lastUpdateTime: at, lastTransitionTime: at}])
      const expired = status === 'Unknown' ? 'yes' : 'no'
      const holder = `${name}_0b9e1d8c`
      await admin.createLease(kind, name, {
        holderIdentity: holder,
        leaseDurationSeconds: expired === 'yes' ? 40 : 3600,
        acquireTime: new V1MicroTime(now - 20 * MINUTE),
        renewTime: new V1MicroTime(now - (expired === 'yes' ? 10 * MINUTE : 30_000)),
        leaseTransitions: 1,
      })
      pools.push({kind, name, status, reason, message, holder, expired})
    }
  }
  return {plane, admin, selector: `tools-run=${run}`, pools}
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
