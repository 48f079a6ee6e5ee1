/** What a failed probe says in the pool's Ready message. */
import {AbortError} from 'abort-controller-x'
import {expect} from 'chai'
import {ClientError, Status} from 'nice-grpc'
import {ProbeError} from '../../../src/core/errors.ts'
import {tidyDetail, toProbeError} from '../../../src/iri/probe-error.ts'

const PATH = '/machine.v1alpha1.MachineRuntime/Status'

describe('IRI probe errors', () => {
  it('names the method, the status and the detail of a gRPC error', () => {
    const error = toProbeError(PATH, new ClientError(PATH, Status.PERMISSION_DENIED, 'no access to the hypervisor'))
    expect(error).to.be.instanceOf(ProbeError)
    expect(error.message).to.equal(`${PATH} PERMISSION_DENIED: no access to the hypervisor`)
  })

  it('names the method and the message of any other error', () => {
    const error = toProbeError(PATH, new TypeError('Channel has been shut down'))
    expect(error).to.be.instanceOf(ProbeError)
    expect(error.message).to.equal(`${PATH}: Channel has been shut down`)
  })

  it('passes an abort through untouched: the caller gave up, the runtime did not fail', () => {
    const abort = new AbortError()
    expect(toProbeError(PATH, abort)).to.equal(abort)
  })

  const details = [
    {
      raw: 'No connection established. Last error: Error: connect ENOENT /run/m.sock. Resolution note: ',
      tidy: 'connect ENOENT /run/m.sock',
      why: 'grpc-js connect failure: the wrapping goes, the cause stays',
    },
    {
      raw: 'No connection established. Last error: Error: connect ECONNREFUSED /run/m.sock. Resolution note: DNS said no',
      tidy: 'connect ECONNREFUSED /run/m.sock (DNS said no)',
      why: 'a non-empty resolution note is kept',
    },
    {raw: 'machine pool is full.', tidy: 'machine pool is full.', why: 'a runtime’s own detail is unchanged'},
  ]
  for (const {raw, tidy, why} of details) {
    it(`tidies "${raw}": ${why}`, () => {
      expect(tidyDetail(raw)).to.equal(tidy)
    })
  }
})
