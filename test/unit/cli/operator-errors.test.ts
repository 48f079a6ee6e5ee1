import {ApiException} from '@kubernetes/client-node'
import {expect} from 'chai'
import {KubeconfigError, OperatorError, debugDetail, operatorErrorLine} from '../../../src/cli/operator-errors.ts'
import {ResourceNotServedError} from '../../../src/kube/stores/served-kinds.ts'
import {openSession} from '../../../src/cli/kube-session.ts'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {translateApiError} from '../../../src/kube/http/api-errors.ts'

/** fetch's failure as client-node passes it on: a TypeError whose cause carries the socket's code. */
function refused(): Error {
  const socket = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:45999'), {code: 'ECONNREFUSED'})
  return new TypeError('fetch failed', {cause: socket})
}

function apiError(code: number, message: string): Error {
  return translateApiError(new ApiException(code, 'x', JSON.stringify({kind: 'Status', message}), {}), {verb: 'list', resource: 'machinepools'})
}

describe('operator error lines', () => {
  const server = 'https://127.0.0.1:45999'

  it('says an unreachable API cannot be reached, where, and what to check', () => {
    const line = operatorErrorLine(translateApiError(refused(), {verb: 'list', resource: 'machinepools'}), {server})
    expect(line).to.equal(
      "error: cannot reach the Kubernetes API at https://127.0.0.1:45999 (ECONNREFUSED): check that the cluster is running and the kubeconfig's server address (--kubeconfig, --context)",
    )
  })

  it('names the forbidden request and points at RBAC for a 403', () => {
    const line = operatorErrorLine(apiError(403, 'machinepools.compute.ironcore.dev is forbidden: User "nobody" cannot list resource "machinepools"'))
    expect(line).to.match(/^error: list machinepools: forbidden \(403\): .*User "nobody" cannot list/)
    expect(line).to.include("check the RBAC of the kubeconfig's identity")
  })

  it('points at the credentials for a 401', () => {
    expect(operatorErrorLine(apiError(401, 'Unauthorized'))).to.include('check the credentials in the kubeconfig')
  })

  it('names the CRD when a kind is not served', () => {
    const line = operatorErrorLine(new ResourceNotServedError(POOL_KINDS.bucket))
    expect(line).to.equal(
      'error: the API does not serve bucketpools (storage.ironcore.dev/v1alpha1): is the CRD bucketpools.storage.ironcore.dev installed? (kubectl get crd bucketpools.storage.ironcore.dev; kubectl apply -k deploy/crds)',
    )
  })

  it('says a kubeconfig file is missing and which flags decide it', () => {
    let error: unknown
    try {
      openSession({kubeconfig: '/nonexistent/kubeconfig'})
    } catch (caught) {
      error = caught
    }
    expect(error).to.be.instanceOf(KubeconfigError)
    expect(operatorErrorLine(error)).to.equal('error: kubeconfig /nonexistent/kubeconfig does not exist; check --kubeconfig, $KUBECONFIG and --context')
  })

  it('prints phrased errors as they are, and anything else on one line', () => {
    expect(operatorErrorLine(new OperatorError('machinepool p9 does not exist'))).to.equal('error: machinepool p9 does not exist')
    expect(operatorErrorLine(new Error('first\n  second'))).to.equal('error: first second')
    expect(operatorErrorLine(apiError(404, 'machinepools "p9" not found'))).to.include('check the name and --kind')
  })

  it('gives the stacks of the error and its causes for --debug', () => {
    const detail = debugDetail(refused())
    expect(detail).to.include('TypeError: fetch failed')
    expect(detail).to.include('caused by: Error: connect ECONNREFUSED')
  })
})
