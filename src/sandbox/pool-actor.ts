/**
 * Everything that plays one pool's side: its test runtime (in the sandbox's own process, on a unix
 * socket) and its poollet (a separate process, as the pool's own certificate identity), and the things
 * a user can do to them. Keys and script steps both end up here.
 */
import path from 'node:path'
import {Status} from 'nice-grpc'
import type {ControlPlane} from '../controlplane/control-plane.ts'
import {startTestRuntime, type TestRuntime} from '../iri/test-runtime.ts'
import {SandboxChild} from './child-process.ts'
import type {SandboxOptions, SandboxPool} from './options.ts'

export const ACTIONS = ['stop', 'start', 'freeze', 'thaw', 'fail', 'hang', 'recover'] as const
export type Action = (typeof ACTIONS)[number]

export type RuntimeMode = 'answer' | 'fail' | 'hang'

export function isAction(word: string): word is Action {
  return (ACTIONS as readonly string[]).includes(word)
}

export interface PoolActor {
  readonly pool: SandboxPool
  readonly runtime: TestRuntime
  readonly poollet: SandboxChild
  readonly runtimeMode: RuntimeMode
  /** Does it (a stop resolves once the process has ended); a no-op when already so, like thawing a running poollet. */
  act(action: Action): Promise<void>
}

export async function startPoolActor(plane: ControlPlane, options: SandboxOptions, pool: SandboxPool, dir: string): Promise<PoolActor> {
  const {kind, name} = pool
  const [runtime, identity] = await Promise.all([
    startTestRuntime({kind, socketPath: path.join(dir, `${name}.sock`)}),
    // The name and group IronCore gives a poollet: RBAC and the admission policy confine it to this pool.
    plane.userIdentity(`${kind.poolletUserPrefix}${name}`, [kind.poolletGroup]),
  ])
  const poollet = new SandboxChild({
    name: `poollet-${name}`,
    logDir: dir,
    plane,
    args: [
      'poollet',
      `--pool-name=${name}`,
      `--kind=${kind.name}`,
      `--runtime-endpoint=${runtime.endpoint}`,
      `--kubeconfig=${identity.kubeconfig}`,
      `--heartbeat-interval=${options.heartbeatIntervalMs}ms`,
      `--heartbeat-status-timeout=${options.heartbeatStatusTimeoutMs}ms`,
      `--heartbeat-lease-duration=${options.heartbeatLeaseDurationMs}ms`,
      '--log-format=json',
    ],
  })
  let runtimeMode: RuntimeMode = 'answer'
  const act = async (action: Action): Promise<void> => {
    switch (action) {
      case 'stop':
        return poollet.stop()
      case 'start':
        return poollet.start()
      case 'freeze':
        return poollet.freeze()
      case 'thaw':
        return poollet.thaw()
      case 'fail':
        runtimeMode = 'fail'
        return runtime.behave({mode: 'fail', code: Status.UNAVAILABLE, message: 'sandbox: failure injected'})
      case 'hang':
        runtimeMode = 'hang'
        return runtime.behave({mode: 'hang'})
      case 'recover':
        runtimeMode = 'answer'
        return runtime.behave({mode: 'answer'})
    }
  }
  return {
    pool,
    runtime,
    poollet,
    get runtimeMode() {
      return runtimeMode
    },
    act,
  }
}

/** What a key toggles: the opposite of the current state. */
export function toggle(actor: PoolActor, key: 's' | 'f' | 'x' | 'h'): Action {
  const state = actor.poollet.state
  switch (key) {
    case 's':
      return state === 'stopped' || state === 'exited' ? 'start' : 'stop'
    case 'f':
      return state === 'frozen' ? 'thaw' : 'freeze'
    case 'x':
      return actor.runtimeMode === 'fail' ? 'recover' : 'fail'
    case 'h':
      return actor.runtimeMode === 'hang' ? 'recover' : 'hang'
  }
}
