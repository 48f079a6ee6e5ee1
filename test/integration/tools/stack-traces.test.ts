/** Stack traces of the built CLI name src/ files (src/cli/stack-source-maps.ts): the bundle as users run it. */
import {expect} from 'chai'
import {fileURLToPath} from 'node:url'
import {runCli} from '../../support/cli.ts'

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
const KUBECONFIG_TS = fileURLToPath(new URL('../../../src/kube/http/kubeconfig.ts', import.meta.url))

describe('stack traces of the built CLI', function () {
  this.timeout(30_000)

  it('name the src/ file, line and column of a frame in ironpool’s code (--debug prints the stack)', async () => {
    const result = await runCli(['pool', 'status', '--kubeconfig=/nonexistent/kubeconfig', '--debug'])
    expect(result.code).to.equal(1)
    expect(result.stderr).to.include('kubeconfig /nonexistent/kubeconfig does not exist')
    expect(result.stderr).to.match(new RegExp(`\\n\\s+at loadKubeConfig \\(${escaped(KUBECONFIG_TS)}:\\d+:\\d+\\)`))
  })
})
