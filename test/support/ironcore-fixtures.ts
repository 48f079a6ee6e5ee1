/**
 * The responses of IronCore's own aggregated API server recorded in test/fixtures/ironcore-api/ (see
 * its README.md): CI cannot build that server, so how ironpool reads IronCore's objects and decides
 * what it may write is tested on these documents.
 */
import {readFileSync} from 'node:fs'
import type {PoolKind} from '../../src/core/pool-kinds.ts'
import {POOL_KINDS} from '../../src/core/pool-kinds.ts'

const DIR = new URL('../fixtures/ironcore-api/', import.meta.url)

export function ironcoreFixture(file: string): unknown {
  return JSON.parse(readFileSync(new URL(file, DIR), 'utf8')) as unknown
}

/** Every pool object recorded, with its kind. */
export const RECORDED_POOLS: readonly {file: string; kind: PoolKind}[] = [
  {file: 'machinepool-fresh.json', kind: POOL_KINDS.machine},
  {file: 'machinepool-noexecute-nulltimes.json', kind: POOL_KINDS.machine},
  {file: 'machinepool-status-apply.json', kind: POOL_KINDS.machine},
  {file: 'machinepool-status-strategic-merge.json', kind: POOL_KINDS.machine},
  {file: 'machinepool-status-strategic-merge-second.json', kind: POOL_KINDS.machine},
  {file: 'volumepool-with-conditions.json', kind: POOL_KINDS.volume},
  {file: 'bucketpool-status-patched.json', kind: POOL_KINDS.bucket},
]

/** The OpenAPI v3 document IronCore serves for a kind's group-version. */
export function ironcoreOpenApi(kind: PoolKind): unknown {
  return ironcoreFixture(`openapi-v3-${kind.group}-${kind.version}.json`)
}
