import {expect} from 'chai'
import {execFile, execFileSync} from 'node:child_process'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {pathToFileURL} from 'node:url'
import {bundledNode, launchPlan, NODE_MAJOR, nodeMajor, RELAUNCHED_ENV} from '../../../bin/launch.js'

const LAUNCH_JS = new URL('../../../bin/launch.js', import.meta.url)

describe("bin/launch.js: ironpool's Node version check, before the bundle", () => {
  const here = (version: string, options: {relaunched?: boolean; bundled?: string} = {}) =>
    launchPlan({version, execPath: `/opt/node-${version}/bin/node`, relaunched: options.relaunched ?? false, bundledNode: () => options.bundled})

  it('runs the bundle on Node 24, whatever the minor and patch, without looking for another Node', () => {
    expect(NODE_MAJOR).to.equal(24)
    const plan = launchPlan({version: '24.0.0', execPath: '/n', relaunched: false, bundledNode: () => expect.fail('looked for the bundled Node')})
    expect(plan).to.deep.equal({action: 'run'})
    expect(here('24.21.0', {relaunched: true})).to.deep.equal({action: 'run'})
  })

  it('relaunches under the bundled Node on any other version: 20, 22, 23, 25', () => {
    for (const version of ['20.20.2', '22.12.0', '23.11.0', '25.1.0']) {
      expect(here(version, {bundled: '/pkg/node_modules/node/bin/node'}), version).to.deep.equal({action: 'relaunch', node: '/pkg/node_modules/node/bin/node'})
    }
  })

  it('refuses in one line, naming the Node it needs and how to get it, when there is no bundled Node', () => {
    const plan = here('20.20.2')
    expect(plan.action).to.equal('refuse')
    const message = plan.action === 'refuse' ? plan.message : ''
    expect(message).to.not.include('\n')
    expect(message).to.match(/^ironpool needs Node\.js 24: this is Node\.js 20\.20\.2 \(\/opt\/node-20\.20\.2\/bin\/node\)/)
    expect(message).to.include('npm install -g').and.to.include('nvm install 24')
  })

  it('refuses rather than relaunching again when the relaunched Node is not 24 either (no loop)', () => {
    const plan = here('22.1.0', {relaunched: true, bundled: '/pkg/node_modules/node/bin/node'})
    expect(plan.action).to.equal('refuse')
    expect(plan.action === 'refuse' ? plan.message : '').to.include('(/opt/node-22.1.0/bin/node) is 22.1.0')
  })

  it('reads the major version of process.versions.node', () => {
    expect(nodeMajor('20.20.2')).to.equal(20)
    expect(nodeMajor('24.0.0-pre')).to.equal(24)
  })

  it('finds the Node 24 of the node package ironpool depends on', () => {
    const node = bundledNode()
    expect(node).to.be.a('string').that.matches(/node_modules\/node\/bin\/node$/)
    const version = execFileSync(node ?? '', ['--version'], {encoding: 'utf8'})
    expect(nodeMajor(version.trim().replace(/^v/, ''))).to.equal(NODE_MAJOR)
  })

  describe('relaunch(): bin/run.js again under the given Node, its flags, arguments, stdio and exit code', () => {
    let dir: string
    before(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'ironpool-launch-'))
      // A script that relaunches ironpool from this Node 24; without process.execve when asked (as on Node 20).
      await writeFile(
        path.join(dir, 'relaunch.mjs'),
        [
          `import {relaunch} from ${JSON.stringify(pathToFileURL(LAUNCH_JS.pathname).href)}`,
          "if (process.env.WITHOUT_EXECVE === '1') delete process.execve",
          'relaunch(process.execPath)',
          '',
        ].join('\n'),
      )
    })
    after(async () => {
      await rm(dir, {recursive: true, force: true})
    })

    for (const mode of ['process.execve', 'a child process']) {
      it(`by ${mode}`, async () => {
        const env = {...process.env, WITHOUT_EXECVE: mode === 'a child process' ? '1' : '0', NO_COLOR: '1'}
        const run = (args: string[]) =>
          new Promise<{code: number | null; stdout: string; stderr: string}>((resolve) =>
            execFile(process.execPath, [path.join(dir, 'relaunch.mjs'), ...args], {env}, (error, stdout, stderr) =>
              resolve({code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr}),
            ),
          )
        const version = await run(['version'])
        expect(version.code, version.stderr).to.equal(0)
        expect(version.stdout).to.match(/^ironpool \S+ \(node v24\./)
        const failed = await run(['pool', 'status', '--kubeconfig=/nonexistent/k'])
        expect(failed.code).to.equal(1)
        expect(failed.stderr.trim()).to.equal('error: kubeconfig /nonexistent/k does not exist; check --kubeconfig, $KUBECONFIG and --context')
        expect(RELAUNCHED_ENV).to.equal('IRONPOOL_RELAUNCHED_NODE')
      })
    }
  })
})
