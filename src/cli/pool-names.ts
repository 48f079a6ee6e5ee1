/**
 * The pool names completion offers, from the API: the pools of each kind asked for, each list bounded
 * by POOL_NAMES_TIMEOUT_MS (a kind not listed in time adds none). `ironpool pool names`, which the
 * bash/zsh script runs, and kubectl's plugin completer both list through this. It loads the
 * Kubernetes client: import it only when names are wanted (which is why the completer's reading of
 * the typed flags is here too).
 */
import {POOL_KIND_NAMES, POOL_KINDS, type PoolKindName} from '../core/index.ts'
import {poolNames} from '../kube/stores/pool-snapshot.ts'
import {POOL_NAMES_TIMEOUT_MS} from './completion/completion-tree.ts'
import {openSession} from './kube-session.ts'

export interface PoolNamesOptions {
  /** Else $KUBECONFIG, then ~/.kube/config, then in-cluster, as kubectl. */
  kubeconfig?: string | undefined
  context?: string | undefined
  kinds: readonly PoolKindName[]
}

export async function listPoolNames(options: PoolNamesOptions): Promise<string[]> {
  const session = openSession({kubeconfig: options.kubeconfig, context: options.context})
  return poolNames(
    session.kc,
    options.kinds.map((name) => POOL_KINDS[name]),
    POOL_NAMES_TIMEOUT_MS,
  )
}

function isKindName(name: string): name is PoolKindName {
  return (POOL_KIND_NAMES as readonly string[]).includes(name)
}

/**
 * What kubectl's completer lists pool names with, from the flags typed as `--flag=value` (the last
 * --kubeconfig and --context; every --kind, comma-separated or repeated); undefined when a --kind is
 * not a kind, where `ironpool pool names` fails its parse and the bash script offers no names either.
 */
export function poolNamesOptions(passed: readonly string[]): PoolNamesOptions | undefined {
  const options: PoolNamesOptions = {kinds: []}
  const kinds: string[] = []
  for (const word of passed) {
    const [flag, value = ''] = word.split(/=(.*)/s)
    if (flag === '--kubeconfig') options.kubeconfig = value
    else if (flag === '--context') options.context = value
    else if (flag === '--kind') kinds.push(...value.split(','))
  }
  if (!kinds.every(isKindName)) return undefined
  return {...options, kinds: kinds.length === 0 ? POOL_KIND_NAMES : kinds}
}
