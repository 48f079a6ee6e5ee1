/**
 * The operator tools' failures, as real processes: one line on stderr saying what failed and what to
 * check, exit 1, no stack trace (unless --debug).
 */
import {expect} from 'chai'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import type {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {runCli} from '../../support/cli.ts'
import {poolletControlPlane} from '../../support/poollet-env.ts'
import {unreachableKubeconfig} from './fixtures.ts'

const COMMANDS = [['pool', 'status'], ['lease', 'inspect', 'tools-any']] as const

/** The command failed with exactly one line on stderr, which matches. */
function expectOneLine(result: {code: number | null; stdout: string; stderr: string}, pattern: RegExp): void {
  expect(result.code, result.stderr).to.equal(1)
  const lines = result.stderr.split('\n').filter((l) => l.trim() !== '')
  expect(lines, result.stderr).to.have.length(1)
  expect(lines[0]).to.match(pattern)
  expect(result.stdout).to.equal('')
}

describe('ironpool pool status and lease inspect: error lines', function () {
  this.timeout(60_000)
  let plane: ControlPlane
  let dir: string | undefined
  const inDir = (name: string) => path.join(dir ?? tmpdir(), name)

  before(async function () {
    this.timeout(120_000)
    plane = await poolletControlPlane()
    dir = await mkdtemp(path.join(tmpdir(), 'ironpool-tools-'))
  })
  after(async () => {
    if (dir !== undefined) await rm(dir, {recursive: true, force: true})
  })

  for (const command of COMMANDS) {
    const name = command.slice(0, 2).join(' ')

    it(`${name}: an unreachable API`, async () => {
      const kubeconfig = await unreachableKubeconfig(plane, inDir(`closed-${command[0]}.kubeconfig`))
      const result = await runCli([...command, `--kubeconfig=${kubeconfig}`])
      expectOneLine(result, /^error: cannot reach the Kubernetes API at https:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): check that the cluster is running and the kubeconfig's server address \(--kubeconfig, --context\)$/)
    })

    it(`${name}: a 403 for a user in no group`, async () => {
      const nobody = await plane.userIdentity('tools-nobody')
      const result = await runCli([...command, `--kubeconfig=${nobody.kubeconfig}`])
      expectOneLine(result, /^error: (list|get) \S+.*: forbidden \(403\): .*User "tools-nobody" cannot (list|get) resource .*; check the RBAC of the kubeconfig's identity \(kubectl auth can-i\)$/)
    })

    it(`${name}: a missing kubeconfig file`, async () => {
      const missing = inDir('no-such.kubeconfig')
      const result = await runCli([...command, `--kubeconfig=${missing}`])
      expectOneLine(result, new RegExp(`^error: kubeconfig ${missing} does not exist; check --kubeconfig, \\$KUBECONFIG and --context$`))
    })

    it(`${name}: a context the kubeconfig does not have, and the env fallback of --kubeconfig`, async () => {
      const result = await runCli([...command, '--context=nowhere'], {IRONPOOL_KUBECONFIG: plane.adminKubeconfig})
      expectOneLine(result, /^error: context nowhere not found in kubeconfig; check --kubeconfig, \$KUBECONFIG and --context$/)
    })
  }

  it('prints the stack after the line with --debug', async () => {
    const nobody = await plane.userIdentity('tools-nobody-debug')
    const result = await runCli(['pool', 'status', `--kubeconfig=${nobody.kubeconfig}`, '--debug'])
    expect(result.code).to.equal(1)
    expect(result.stderr.split('\n')[0]).to.match(/^error: list .*forbidden \(403\)/)
    expect(result.stderr).to.include('ForbiddenError: ')
    expect(result.stderr).to.match(/\n\s+at /)
  })

  it('refuses --watch with --json as a usage error (exit 2)', async () => {
    const result = await runCli(['pool', 'status', '--watch', '--json', `--kubeconfig=${plane.adminKubeconfig}`])
    expect(result.code).to.equal(2)
    expect(result.stdout).to.include('use --watch -o json')
  })
})
