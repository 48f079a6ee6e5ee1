import {KubeConfig} from '@kubernetes/client-node'
import {expect} from 'chai'
import type {AgentOptions} from 'node:https'
import {dropConnections, reuseConnections} from '../../../../src/kube/http/kubeconfig.ts'

type CreateDispatcher = (cluster: {server?: string}, agentOptions: AgentOptions) => {closed?: boolean}

/** client-node's private createDispatcher, as reuseConnections() replaced it. */
function dispatcherOf(): CreateDispatcher {
  const kc = new KubeConfig()
  kc.loadFromOptions({
    clusters: [{name: 'c', server: 'https://127.0.0.1:6443'}],
    users: [{name: 'u', token: 't'}],
    contexts: [{name: 'x', cluster: 'c', user: 'u'}],
    currentContext: 'x',
  })
  reuseConnections(kc)
  const create = (kc as unknown as {createDispatcher: CreateDispatcher}).createDispatcher.bind(kc)
  return Object.assign(create, {kc})
}

describe('reuseConnections: one connection pool per TLS identity', () => {
  const cluster = {server: 'https://127.0.0.1:6443'}
  // client-node builds the options afresh for each request: equal bytes in new Buffers.
  const identity = (cert: string): AgentOptions => ({ca: Buffer.from('ca'), cert: Buffer.from(cert), key: Buffer.from(`key of ${cert}`), rejectUnauthorized: true})

  it('hands every request of the same identity the same pool, and a new one (the old one closed) when the certificate changes, then keeps that', () => {
    const create = dispatcherOf()
    const first = create(cluster, identity('cert-1'))
    expect(create(cluster, identity('cert-1'))).to.equal(first)
    expect(create(cluster, identity('cert-1'))).to.equal(first)
    const rotated = create(cluster, identity('cert-2'))
    expect(rotated).to.not.equal(first)
    expect(first.closed, 'the pool of the certificate rotated away is closed').to.equal(true)
    expect(create(cluster, identity('cert-2'))).to.equal(rotated)
    // Verification off is another identity too.
    expect(create(cluster, {...identity('cert-2'), rejectUnauthorized: false})).to.not.equal(rotated)
  })

  it('after dropConnections() the same identity gets a fresh pool', () => {
    const create = dispatcherOf()
    const first = create(cluster, identity('cert-1'))
    expect(dropConnections((create as unknown as {kc: KubeConfig}).kc)).to.equal(1)
    const fresh = create(cluster, identity('cert-1'))
    expect(fresh).to.not.equal(first)
    expect(create(cluster, identity('cert-1'))).to.equal(fresh)
  })
})
