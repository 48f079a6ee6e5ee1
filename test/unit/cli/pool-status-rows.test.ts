import {expect} from 'chai'
import {PoolStatusPrinter} from '../../../src/cli/report/pool-status-printer.ts'
import {skewNotes, statusCells} from '../../../src/cli/report/pool-status-rows.ts'
import type {Cell} from '../../../src/cli/table.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {poolView, type PoolView} from '../../../src/core/lifecycle/reading/pool-view.ts'
import type {ConditionStatus, Lease, Pool} from '../../../src/core/types.ts'

const NOW = Date.parse('2026-01-01T12:00:00Z')
const kind = POOL_KINDS.machine

function view(status: ConditionStatus, reason: string, leaseSpec?: Lease['spec']): PoolView {
  const pool: Pool = {
    apiVersion: 'compute.ironcore.dev/v1alpha1',
    kind: 'MachinePool',
    metadata: {name: 'p1'},
    status: {conditions: [{type: 'Ready', status, reason, message: `${status} message`, lastTransitionTime: '2026-01-01T11:57:00Z'}]},
  }
  return poolView(kind, pool, leaseSpec && {name: 'p1', namespace: kind.leaseNamespace, spec: leaseSpec}, NOW)
}

const text = (cells: ReturnType<typeof statusCells>) => cells.map((c) => (typeof c === 'string' ? c : c.text))
const fresh = {holderIdentity: 'p1_abc', leaseDurationSeconds: 40, renewTime: '2026-01-01T11:59:50.000000Z'}
const stale = {holderIdentity: 'p1_abc', leaseDurationSeconds: 40, renewTime: '2026-01-01T11:58:00.000000Z'}

describe('pool status rows', () => {
  it('shows a True pool with a valid Lease', () => {
    expect(text(statusCells(view('True', 'HeartbeatReceived', fresh)))).to.deep.equal(['p1', 'machine', 'True', 'HeartbeatReceived', '3m', 'p1_abc', '10s', '40s', 'no'])
  })

  it('shows a False pool', () => {
    expect(text(statusCells(view('False', 'RuntimeUnreachable', fresh)))).to.deep.equal(['p1', 'machine', 'False', 'RuntimeUnreachable', '3m', 'p1_abc', '10s', '40s', 'no'])
  })

  it('shows an Unknown pool whose Lease expired', () => {
    expect(text(statusCells(view('Unknown', 'MachinePoolStatusUnknown', stale)))).to.deep.equal(['p1', 'machine', 'Unknown', 'MachinePoolStatusUnknown', '3m', 'p1_abc', '2m', '40s', 'yes'])
  })

  it('says <none> and <no lease> for a pool without a Lease', () => {
    expect(text(statusCells(view('Unknown', 'MachinePoolStatusUnknown')))).to.deep.equal(['p1', 'machine', 'Unknown', 'MachinePoolStatusUnknown', '3m', '<none>', '<none>', '<none>', '<no lease>'])
  })

  it('adds MESSAGE and NOTES when wide', () => {
    const cells = text(statusCells(view('False', 'RuntimeUnreachable', fresh), {wide: true}))
    expect(cells.slice(9)).to.deep.equal(['False message', '<none>'])
  })

  it('colours READY only when colour is on', () => {
    const ready = (colour: boolean) => statusCells(view('False', 'RuntimeUnreachable', fresh), {colour})[2] as Cell
    expect(ready(false).paint).to.equal(undefined)
    expect(ready(true).paint?.('False')).to.equal('\u001b[31mFalse\u001b[39m')
  })

  it('marks an age from a future timestamp and explains it in a note', () => {
    const skewed = view('True', 'HeartbeatReceived', {...fresh, renewTime: '2026-01-01T12:10:00.000000Z'})
    expect(text(statusCells(skewed))[6]).to.equal('0s!')
    expect(skewNotes([skewed])).to.deep.equal(['! machinepool p1: Lease renewTime 2026-01-01T12:10:00.000000Z is in the future: the clocks look skewed; its ages are display only'])
    expect(text(statusCells(skewed, {wide: true}))[10]).to.include('in the future')
  })

  it('prints a table once and watch rows under the same columns, notes on stderr', () => {
    const out: string[] = []
    const err: string[] = []
    const printer = new PoolStatusPrinter({format: 'table', out: (l) => out.push(l), err: (l) => err.push(l)})
    printer.printAll([view('True', 'HeartbeatReceived', fresh)], true)
    printer.printChange(view('False', 'RuntimeUnreachable', fresh))
    expect(out).to.have.length(3)
    expect(out[2]?.indexOf('RuntimeUnreachable')).to.equal(out[0]?.indexOf('REASON'))
    expect(err).to.deep.equal([])
  })

  it('prints JSON as {pools} once, and one object per line under --watch', () => {
    const out: string[] = []
    const once = new PoolStatusPrinter({format: 'json', out: (l) => out.push(l), err: () => {}})
    once.printAll([view('True', 'HeartbeatReceived', fresh)])
    expect((JSON.parse(out[0] ?? '') as {pools: PoolView[]}).pools[0]).to.include({name: 'p1', ready: 'True', lease: 'valid'})
    out.length = 0
    once.printChange(view('False', 'RuntimeUnreachable', fresh))
    expect(out).to.have.length(1)
    expect(JSON.parse(out[0] ?? '')).to.include({ready: 'False'})
  })

  it('says so on stderr when there is no pool', () => {
    const err: string[] = []
    new PoolStatusPrinter({format: 'table', out: () => {}, err: (l) => err.push(l)}).printAll([])
    expect(err).to.deep.equal(['No pools found.'])
  })
})
