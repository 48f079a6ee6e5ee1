import {expect} from 'chai'
import {readFile, readdir} from 'node:fs/promises'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {parseAllDocuments} from 'yaml'
import {POOL_KIND_NAMES, POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import {renderDeployFiles} from '../../../src/deploy/render-manifests.ts'

const DEPLOY_DIR = fileURLToPath(new URL('../../../deploy/', import.meta.url))

interface K8sObject {
  apiVersion: string
  kind: string
  metadata: {name: string; namespace?: string}
  rules?: Array<{apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[]}>
  subjects?: Array<{kind: string; name: string; namespace?: string}>
  roleRef?: {kind: string; name: string}
}

async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(dir, {withFileTypes: true})
  const nested = await Promise.all(
    entries.map((entry) => (entry.isDirectory() ? filesUnder(path.join(dir, entry.name), `${prefix}${entry.name}/`) : Promise.resolve([`${prefix}${entry.name}`]))),
  )
  return nested.flat()
}

/** Every object of the rendered YAML files, with the file it came from. */
function renderedObjects(): Array<{file: string; object: K8sObject}> {
  return [...renderDeployFiles()]
    .filter(([file]) => file.endsWith('.yaml'))
    .flatMap(([file, text]) => parseAllDocuments(text).map((document) => ({file, object: document.toJS() as K8sObject})))
}

const find = (kind: string, name: string, namespace?: string) =>
  renderedObjects().filter(({object}) => object.kind === kind && object.metadata.name === name && object.metadata.namespace === namespace)

describe('deploy/ manifests', () => {
  it('deploy/ is exactly what src/deploy renders: no drift, nothing missing, nothing left over (run `npm run manifests`)', async () => {
    const rendered = renderDeployFiles()
    expect((await filesUnder(DEPLOY_DIR)).sort()).to.deep.equal([...rendered.keys()].sort())
    for (const [name, text] of rendered) expect(await readFile(path.join(DEPLOY_DIR, name), 'utf8'), name).to.equal(text)
  })

  it('every kustomization lists only files and layers that are rendered', () => {
    const rendered = renderDeployFiles()
    for (const {file, object} of renderedObjects().filter(({object}) => object.kind === 'Kustomization')) {
      for (const resource of (object as unknown as {resources: string[]}).resources) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), resource))
        expect(rendered.has(target) || rendered.has(`${target}/kustomization.yaml`), `${file} → ${resource}`).to.be.true
      }
    }
  })

  it('deploy/default includes every layer an install needs', () => {
    const text = renderDeployFiles().get('default/kustomization.yaml') ?? ''
    for (const layer of ['crds', 'namespaces', 'controller', 'poollet', 'policies']) expect(text).to.include(`../${layer}\n`)
  })

  for (const name of POOL_KIND_NAMES) {
    const kind = POOL_KINDS[name]
    it(`renders the ${name} kind's lease namespace, poollet Role and binding, lease reader and pool ClusterRole`, () => {
      expect(find('Namespace', kind.leaseNamespace), 'namespace').to.have.length(1)
      const [role] = find('Role', kind.poolletGroup, kind.leaseNamespace)
      expect(role?.object.rules).to.deep.equal([{apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'get', 'list', 'watch', 'update', 'patch']}])
      const [binding] = find('RoleBinding', kind.poolletGroup, kind.leaseNamespace)
      expect(binding?.object.subjects).to.deep.equal([{kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: kind.poolletGroup}])
      const [reader] = find('RoleBinding', 'ironpool-controller:lease-reader', kind.leaseNamespace)
      expect(reader?.object.subjects).to.deep.equal([{kind: 'ServiceAccount', name: 'ironpool-controller', namespace: 'ironpool-system'}])
      const [clusterRole] = find('ClusterRole', `ironpool:${kind.poolletGroup}`)
      expect(clusterRole?.object.rules).to.deep.equal([
        {apiGroups: [kind.group], resources: [kind.plural], verbs: ['get', 'list', 'watch']},
        {apiGroups: [kind.group], resources: [`${kind.plural}/status`], verbs: ['get', 'patch', 'update']},
      ])
      expect(find('ClusterRoleBinding', `ironpool:${kind.poolletGroup}`)[0]?.object.subjects).to.deep.equal([binding?.object.subjects?.[0]])
    })

    it(`lets the controller read ${kind.plural} and write only their status`, () => {
      const rules = find('ClusterRole', 'ironpool-controller')[0]?.object.rules ?? []
      const forKind = rules.filter((rule) => rule.apiGroups.includes(kind.group))
      expect(forKind.find((rule) => rule.resources.includes(kind.plural))?.verbs).to.deep.equal(['get', 'list', 'watch'])
      expect(forKind.find((rule) => rule.resources.includes(`${kind.plural}/status`))?.verbs).to.deep.equal(['get', 'patch', 'update'])
    })
  }

  it('no poollet username prefix is a prefix of another (the policy reads the pool name after it)', () => {
    const prefixes = POOL_KIND_NAMES.map((name) => POOL_KINDS[name].poolletUserPrefix)
    for (const a of prefixes) for (const b of prefixes) if (a !== b) expect(b.startsWith(a), `${a} / ${b}`).to.be.false
  })

  it('evaluates the admission policy only for poollet usernames and poollet-group members, and names every kind in it', () => {
    const [policy] = find('ValidatingAdmissionPolicy', 'ironpool-poollet-own-pool')
    const spec = (policy?.object as unknown as {spec: {matchConditions: Array<{expression: string}>; validations: unknown[]}}).spec
    for (const name of POOL_KIND_NAMES) {
      expect(spec.matchConditions[0]?.expression).to.include(`startsWith('${POOL_KINDS[name].poolletUserPrefix}')`).and.to.include(`'${POOL_KINDS[name].poolletGroup}'`)
    }
    // One per kind (its Lease and pool), one for Events, then the size bounds (reason Invalid), each message naming its field.
    const bounds = (spec.validations as Array<{reason: string; messageExpression: string}>).slice(POOL_KIND_NAMES.length + 1)
    expect(bounds.length).to.be.at.least(10)
    expect(bounds.every((v) => v.reason === 'Invalid' && /'(a )?(spec|status|metadata)\./.test(v.messageExpression))).to.be.true
  })
})
