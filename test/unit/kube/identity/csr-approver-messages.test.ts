import {KubeConfig} from '@kubernetes/client-node'
import {expect} from 'chai'
import type {PoolEvent} from '../../../../src/core/ports.ts'
import {POOL_KINDS} from '../../../../src/core/pool-kinds.ts'
import {CLIENT_SIGNER} from '../../../../src/core/identity/poollet-csr.ts'
import {CsrApprover, REASON_NOT_APPROVED} from '../../../../src/kube/identity/csr-approver.ts'
import {EVENT_MESSAGE_MAX, UNTRUSTED_VALUE_MAX} from '../../../../src/kube/identity/untrusted-text.ts'
import {FakeClock} from '../../../support/fake-clock.ts'
import {FakeLogger} from '../../../support/fake-logger.ts'
import {peculiarCsr, USAGES} from '../../../support/csr-craft.ts'
import {rawControl} from './raw-control.ts'

const machine = POOL_KINDS.machine
const BOOTSTRAP = {username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', machine.bootstrapperGroup, 'system:authenticated']}

/**
 * An approver whose cache holds one CSR and whose refusals are observed: the log line and the Event.
 * A broken request is refused before any call to kube-apiserver, so the kubeconfig names no server that answers.
 */
async function refuse(pem: string, requester: {username: string; groups: string[]} = BOOTSTRAP): Promise<{line: Record<string, unknown>; event: PoolEvent}> {
  const kubeConfig = new KubeConfig()
  kubeConfig.loadFromOptions({clusters: [{name: 'c', server: 'https://127.0.0.1:1'}], users: [{name: 'u'}], contexts: [{name: 'x', cluster: 'c', user: 'u'}], currentContext: 'x'})
  const events: PoolEvent[] = []
  const logger = new FakeLogger()
  const approver = new CsrApprover({kubeConfig, events: {record: (e) => events.push(e)}, logger, clock: new FakeClock()})
  const csr = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: {name: 'csr-1', uid: 'uid-1', resourceVersion: '1'},
    spec: {request: Buffer.from(pem).toString('base64'), signerName: CLIENT_SIGNER, usages: USAGES, ...requester},
  }
  approver.cache.get = (name: string) => (name === 'csr-1' ? csr : undefined)
  await approver.review('csr-1')
  const lines = logger.entries.filter((e) => e.msg === 'poollet certificate signing request not approved')
  expect(lines).to.have.length(1)
  expect(events).to.have.length(1)
  expect(events[0]?.reason).to.equal(REASON_NOT_APPROVED)
  return {line: (lines[0] as {obj: Record<string, unknown>}).obj, event: events[0] as PoolEvent}
}

describe("CsrApprover's refusal messages: the request's values bounded and escaped", function () {
  this.timeout(30_000)

  // The pool-name rule quotes the pool as JSON, so there the escapes are JSON-escaped once more.
  const hostile = [
    {rule: 'pool-name', cn: `${machine.poolletUserPrefix}\x1b]0;pwned\x07\u202e${'a'.repeat(1024 * 1024)}`, escaped: '\\\\x1b]0;pwned\\\\x07\\\\u202e'},
    {rule: 'common-name', cn: `\x1b]0;pwned\x07\u202e${'a'.repeat(1024 * 1024)}`, escaped: '\\x1b]0;pwned\\x07\\u202e'},
  ]
  for (const {rule, cn, escaped} of hostile) {
    it(`refuses a 1 MB CN with ESC, BEL and U+202E in it (rule ${rule}) with a short, escaped log line and Event that name its length`, async () => {
      const {pem} = await peculiarCsr({subject: [{CN: [cn]}, {O: [machine.poolletGroup]}]})
      const {line, event} = await refuse(pem, {...BOOTSTRAP, username: 'system:bootstrap:abc\x1b[2J'})
      for (const message of [event.message, String(line.message)]) {
        expect(message).to.include(`(rule ${rule})`)
        expect(message).to.include(`…(${cn.length} characters)`)
        expect(message).to.include(escaped)
        expect(rawControl(message)).to.equal(undefined)
        // The CN is cut to its own bound, well within the whole message's.
        expect(message.length).to.be.below(UNTRUSTED_VALUE_MAX + 250)
      }
      expect(line.message).to.equal(event.message)
      expect(line.rule).to.equal(rule)
      expect(line.user).to.equal('system:bootstrap:abc\\x1b[2J')
    })
  }

  it('bounds the message whole when the values bounded one by one would break another rule (two long names alike in their first 256 characters)', async () => {
    const cn = `${machine.poolletUserPrefix}${'x'.repeat(240)}b`
    const {pem} = await peculiarCsr({subject: [{CN: [cn]}, {O: [machine.poolletGroup]}]})
    const {line, event} = await refuse(pem, {username: `${machine.poolletUserPrefix}${'x'.repeat(240)}a\u202e`, groups: [machine.poolletGroup, 'system:authenticated']})
    expect(line.rule).to.equal('self')
    expect(event.message).to.include('(rule self): requester ')
    expect(event.message).to.include('may request only its own name')
    expect(event.message).to.include('\\u202e')
    expect(event.message).to.match(/…\(\d+ characters\)$/)
    expect(rawControl(event.message)).to.equal(undefined)
    expect(event.message.length).to.be.below(700)
    expect(Buffer.byteLength(event.message, 'utf8')).to.be.at.most(EVENT_MESSAGE_MAX)
  })

  it("keeps the Event message within Kubernetes' 1024 bytes when many values each within their bound add up", async () => {
    const ous = Array.from({length: 20}, (_, i) => ({OU: [`${i}${'é'.repeat(300)}`]}))
    const {pem} = await peculiarCsr({subject: [{CN: [`${machine.poolletUserPrefix}p1`]}, {O: [machine.poolletGroup]}, ...ous]})
    const {line, event} = await refuse(pem)
    expect(event.message).to.include('(rule subject)')
    expect(Buffer.byteLength(event.message, 'utf8')).to.be.at.most(EVENT_MESSAGE_MAX)
    expect(event.message).to.match(/…\(\d+ characters\)$/)
    expect(line.message).to.equal(event.message)
  })
})
