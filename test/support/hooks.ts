/** Root hooks for the whole mocha run. */
import {stopSharedControlPlane} from './control-plane.ts'

export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000)
    await stopSharedControlPlane()
  },
}
