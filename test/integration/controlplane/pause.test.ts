/**
 * The control plane's fault hooks: kube-apiserver or etcd frozen (SIGSTOP) keeps every socket open and
 * answers nothing until resumed; stop() ends a frozen control plane without waiting for a resume.
 */
import {readFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {ControlPlane} from '../../../src/controlplane/control-plane.ts'
import {processGone, waitFor} from '../../support/wait.ts'

/** A bounded admin GET: the status, or 'no answer' when the deadline passed first. */
async function answer(plane: ControlPlane, path: string, timeoutMs: number): Promise<number | 'no answer'> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<'no answer'>((resolve) => (timer = setTimeout(() => resolve('no answer'), timeoutMs)))
  try {
    return await Promise.race([plane.request(path).then((r) => r.status, () => 'no answer' as const), deadline])
  } finally {
    clearTimeout(timer)
  }
}

describe('control plane fault hooks (SIGSTOP/SIGCONT)', function () {
  this.timeout(120_000)
  let plane: ControlPlane

  before(async () => {
    plane = await ControlPlane.start()
  })
  after(async () => {
    await plane?.stop()
  })

  it('pauseApiServer() leaves requests unanswered, resumeApiServer() answers them', async () => {
    plane.pauseApiServer()
    try {
      expect(await answer(plane, '/readyz', 1_000)).to.equal('no answer')
      expect(plane.apiServerRunning).to.be.true
    } finally {
      plane.resumeApiServer()
    }
    await waitFor('/readyz after resume', async () => (await answer(plane, '/readyz', 2_000)) === 200, {timeoutMs: 30_000})
  })

  it('pauseEtcd() leaves a quorum read unanswered while the API server is up, resumeEtcd() answers it', async () => {
    const quorumRead = '/api/v1/namespaces/default'
    expect(await answer(plane, quorumRead, 5_000)).to.equal(200)
    plane.pauseEtcd()
    try {
      expect(await answer(plane, '/livez/ping', 2_000)).to.equal(200)
      expect(await answer(plane, quorumRead, 1_000)).to.equal('no answer')
    } finally {
      plane.resumeEtcd()
    }
    await waitFor('a quorum read after resume', async () => (await answer(plane, quorumRead, 2_000)) === 200, {timeoutMs: 30_000})
  })

  it('stopping a paused kube-apiserver resumes it, so that it shuts down on SIGTERM rather than by the SIGKILL fallback', async () => {
    const log = path.join(plane.dir, 'kube-apiserver.log')
    const before = (await readFile(log, 'utf8')).length
    plane.pauseApiServer()
    await plane.stopApiServer()
    expect(plane.apiServerRunning).to.be.false
    // Its graceful shutdown logs this; a process killed while stopped logs nothing more.
    expect((await readFile(log, 'utf8')).slice(before)).to.include('Stopped listening')
    await plane.startApiServer()
  })

  it('stop() ends a paused etcd and kube-apiserver', async () => {
    const pids = plane.pids
    expect(pids).to.have.length(2)
    plane.pauseEtcd()
    plane.pauseApiServer()
    await plane.stop()
    expect(pids.filter((pid) => !processGone(pid))).to.deep.equal([])
  })
})
