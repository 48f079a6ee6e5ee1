import {expect} from 'chai'
import {parseAllDocuments} from 'yaml'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {renderDeployFiles} from '../../../src/deploy/render-manifests.ts'
import {DEPLOY_DIR} from '../../support/control-plane.ts'

const DEFAULT = `${DEPLOY_DIR}default`

/** The names of the Namespaces deploy/default creates, read from what it renders. */
/** Each Namespace deploy/ ships, once (deploy/dry-run names ironpool-system as deploy/default does). */
function shippedNamespaces(): string[] {
  const names = [...renderDeployFiles()]
    .filter(([file]) => file.endsWith('.yaml'))
    .flatMap(([, text]) => parseAllDocuments(text).map((document) => document.toJS() as {kind: string; metadata?: {name: string}}))
    .filter((object) => object.kind === 'Namespace')
    .map((object) => object.metadata?.name ?? '')
  return [...new Set(names)]
}

const lines = (output: string) => output.trim().split('\n').filter((line) => line !== '')

describe('deploy/default on a real API server (kubectl apply -k)', function () {
  this.timeout(120_000)
  let plane: ControlPlane
  let objectCount = 0

  // A private control plane: the install adds a cluster-wide admission policy and RBAC that other
  // tests' shared plane must not see.
  before(async () => {
    plane = await ControlPlane.start()
  })
  after(async () => {
    await plane?.stop()
  })

  it('dry-run on an empty server refuses nothing but objects in the namespaces the same apply would create', async () => {
    // Server-side dry-run creates nothing, so NamespaceLifecycle refuses objects in namespaces the same
    // apply brings: a documented limit of dry-run, not a fault in deploy/. Every other object is admitted.
    const error = await plane.kubectl(['apply', '-k', DEFAULT, '--dry-run=server']).then(() => undefined, (e: unknown) => e as Error)
    const errors = (error?.message ?? '').split('\n').filter((line) => line.includes('Error from server'))
    expect(errors).to.not.be.empty
    const namespaces = shippedNamespaces()
    for (const line of errors) {
      const missing = /Error from server \(NotFound\): .* namespaces "([^"]+)" not found/.exec(line)?.[1]
      expect(namespaces, line).to.include(missing)
    }
  })

  it('with its namespaces present, `kubectl apply -k deploy/default --dry-run=server` admits every object and writes none', async () => {
    for (const name of shippedNamespaces()) await plane.kubectl(['create', 'namespace', name])
    const output = lines(await plane.kubectl(['apply', '-k', DEFAULT, '--dry-run=server']))
    objectCount = output.length
    expect(output.every((line) => line.endsWith('(server dry run)')), output.join('\n')).to.be.true
    expect(objectCount).to.be.greaterThan(30)
    expect(await plane.kubectl(['get', 'crd', '-o', 'name'])).to.equal('')
  })

  it('applies for real, every object created or configured', async () => {
    const output = lines(await plane.kubectl(['apply', '-k', DEFAULT]))
    expect(output).to.have.length(objectCount)
    for (const line of output) expect(line).to.match(/ (created|configured)$/)
    expect(await plane.kubectl(['get', 'crd', '-o', 'name'])).to.include('machinepools.compute.ironcore.dev')
  })

  it('applying again changes nothing: every object unchanged', async () => {
    const output = lines(await plane.kubectl(['apply', '-k', DEFAULT]))
    console.log(`      ${output.length} objects, second apply: ${[...new Set(output.map((line) => line.split(' ').at(-1)))].join(', ')}`)
    expect(output).to.have.length(objectCount)
    for (const line of output) expect(line).to.match(/ unchanged$/)
  })

  it('admits the example poollet Deployment (deploy/poollet/example) on top of the install', async () => {
    const output = lines(await plane.kubectl(['apply', '-k', `${DEPLOY_DIR}poollet/example`, '--dry-run=server']))
    expect(output).to.deep.equal(['deployment.apps/machinepoollet-example-pool created (server dry run)'])
  })
})
