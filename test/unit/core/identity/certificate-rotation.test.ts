import {expect} from 'chai'
import {certificateState, renewalTime, startupIdentity} from '../../../../src/core/identity/certificate-rotation.ts'

const T0 = Date.parse('2026-01-01T00:00:00Z')
const HOUR = 3600_000

describe('client certificate rotation timing', () => {
  const cert = {notBefore: T0, notAfter: T0 + 100 * HOUR}

  it('renews at 70 % of the lifetime at the earliest and 90 % at the latest', () => {
    const obtained = {...cert, obtainedAt: T0}
    expect(renewalTime(obtained, () => 0)).to.equal(T0 + 70 * HOUR)
    expect(renewalTime(obtained, () => 0.5)).to.equal(T0 + 80 * HOUR)
    expect(renewalTime(obtained, () => 0.999999)).to.be.below(T0 + 90 * HOUR).and.above(T0 + 89.9 * HOUR)
  })

  it('counts the lifetime of a certificate it just obtained from then, not from a backdated notBefore', () => {
    // Kubernetes' signer backdates notBefore by 5 minutes; a 20 s certificate would otherwise be renewed at once.
    const issued = {notBefore: T0 - 300_000, notAfter: T0 + 20_000, obtainedAt: T0}
    expect(renewalTime(issued, () => 0)).to.equal(T0 + 14_000)
  })

  it("counts a certificate read from disk from five minutes after notBefore (Kubernetes' signer's backdate)", () => {
    const stored = {notBefore: T0 - 300_000, notAfter: T0 + 20_000}
    expect(renewalTime(stored, () => 0)).to.equal(T0 + 14_000)
    expect(certificateState(stored, T0 + 10_000)).to.equal('valid')
    // Shorter than the backdate in all: from notBefore.
    expect(renewalTime({notBefore: T0, notAfter: T0 + 100_000}, () => 0)).to.equal(T0 + 70_000)
  })

  it('tells valid, about to expire (past 90 %), expired and not yet valid apart', () => {
    expect(certificateState(cert, T0 + 50 * HOUR)).to.equal('valid')
    expect(certificateState(cert, T0 + 95 * HOUR)).to.equal('expiring')
    expect(certificateState(cert, T0 + 100 * HOUR)).to.equal('expired')
    expect(certificateState(cert, T0 - 1)).to.equal('not-yet-valid')
  })
})

describe('the identity at start', () => {
  const times = {notBefore: T0, notAfter: T0 + 100 * HOUR}
  const now = T0 + 50 * HOUR

  it('uses a stored kubeconfig whose certificate is valid, bootstrap or not', () => {
    for (const bootstrapAvailable of [true, false]) {
      expect(startupIdentity({stored: {hasCertificate: true, times}, bootstrapAvailable, now})).to.deep.equal({action: 'use'})
    }
  })

  it('bootstraps when there is no kubeconfig yet, or its certificate is expired or about to expire', () => {
    expect(startupIdentity({stored: undefined, bootstrapAvailable: true, now}).action).to.equal('bootstrap')
    const expired = startupIdentity({stored: {hasCertificate: true, times}, bootstrapAvailable: true, now: T0 + 101 * HOUR})
    expect(expired.action).to.equal('bootstrap')
    expect(expired.action === 'bootstrap' && expired.reason).to.include('expired')
    const expiring = startupIdentity({stored: {hasCertificate: true, times}, bootstrapAvailable: true, now: T0 + 95 * HOUR})
    expect(expiring.action === 'bootstrap' && expiring.reason).to.include('about to expire')
  })

  it('without a bootstrap kubeconfig, uses what it has and fails only when it has nothing', () => {
    expect(startupIdentity({stored: {hasCertificate: true, times}, bootstrapAvailable: false, now: T0 + 101 * HOUR})).to.deep.equal({action: 'use'})
    expect(startupIdentity({stored: undefined, bootstrapAvailable: false, now}).action).to.equal('fail')
  })

  it('uses a kubeconfig that authenticates without a certificate (a token) as it is', () => {
    expect(startupIdentity({stored: {hasCertificate: false, exists: true}, bootstrapAvailable: true, now})).to.deep.equal({action: 'use'})
  })
})
