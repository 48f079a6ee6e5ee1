/**
 * Root hooks. In a serial mocha run they run once, around the whole run. Under `mocha --parallel`
 * (`npm test`, test/parallel.mocharc.cjs) each file is its own run inside a worker process, so they run
 * around every file: the shared control plane is then kept for the worker's next files (as a serial run
 * keeps it for all files) and ends with the worker process, by ControlPlane's exit handler, backed by
 * its reaper (src/controlplane/reaper.ts) should the worker be killed.
 */
import {stopSharedControlPlane} from './control-plane.ts'

/** mocha sets MOCHA_WORKER_ID in the environment of its parallel workers. */
const inParallelWorker = process.env.MOCHA_WORKER_ID !== undefined

export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    if (inParallelWorker) return
    this.timeout(30_000)
    await stopSharedControlPlane()
  },
}
