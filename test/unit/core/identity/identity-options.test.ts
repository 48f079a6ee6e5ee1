import {expect} from 'chai'
import {validateIdentityOptions, type IdentityInput} from '../../../../src/core/identity/identity-options.ts'

const base: IdentityInput = {rotateCertificates: false, qps: '20', burst: 30}

function errors(input: Partial<IdentityInput>): string[] {
  const result = validateIdentityOptions({...base, ...input})
  return result.ok ? [] : result.errors
}

describe('poollet identity flags (IronCore’s rules)', () => {
  it('refuses --kubeconfig with --kubeconfig-secret-name, naming both', () => {
    expect(errors({kubeconfig: '/k', secretName: 's'})).to.have.length(1).and.to.match(/--kubeconfig and --kubeconfig-secret-name exclude each other/)
  })

  it('needs a place to keep what --bootstrap-kubeconfig and --rotate-certificates are issued', () => {
    expect(errors({bootstrapKubeconfig: '/b'})[0]).to.include('--bootstrap-kubeconfig needs --kubeconfig or --kubeconfig-secret-name')
    expect(errors({rotateCertificates: true})[0]).to.include('--rotate-certificates needs --kubeconfig or --kubeconfig-secret-name')
    expect(errors({bootstrapKubeconfig: '/b', rotateCertificates: true, kubeconfig: '/k'})).to.deep.equal([])
  })

  it('refuses a namespace without a Secret name, and a bad --qps, --burst or timeout, all at once', () => {
    const all = errors({secretNamespace: 'ns', qps: 'fast', burst: 0, csrTimeout: 'soon'})
    expect(all).to.have.length(4)
    expect(all.join('\n')).to.include('--kubeconfig-secret-namespace needs --kubeconfig-secret-name').and.include('--qps').and.include('--burst').and.include('--certificate-request-timeout')
  })

  it('reads --qps as a positive number', () => {
    const ok = validateIdentityOptions({...base, qps: '2.5'})
    expect(ok.ok && ok.options.qps).to.equal(2.5)
    expect(errors({qps: '0'})[0]).to.equal('--qps "0" must be a number > 0 (requests per second)')
  })

  it('says where the kubeconfig lives', () => {
    const file = validateIdentityOptions({...base, kubeconfig: '/k'})
    expect(file.ok && file.options.source).to.deep.equal({type: 'file', path: '/k'})
    const secret = validateIdentityOptions({...base, secretName: 's', secretNamespace: 'ns'})
    expect(secret.ok && secret.options.source).to.deep.equal({type: 'secret', name: 's', namespace: 'ns'})
    const none = validateIdentityOptions(base)
    expect(none.ok && none.options.source).to.deep.equal({type: 'default'})
  })
})
