/**
 * The bundle's entry for bin/kubectl-complete.js, installed as `kubectl_complete-ironpool`
 * (kubectl-completion.ts says how kubectl runs it). It reads the completion table the build wrote
 * beside it (scripts/build.ts) instead of loading oclif, so a command word or a flag costs one Node
 * start; only pool names load the Kubernetes client. It always exits 0: kubectl drops the whole
 * answer of a completer that fails, so a listing that fails offers no names and keeps the rest.
 */
import {readFileSync} from 'node:fs'
import type {CompletionCommand} from './completion/completion-tree.ts'
import {cobraOutput, kubectlCompletion} from './completion/kubectl-completion.ts'

/** Written by scripts/build.ts from oclif's commands, through completionCommands(). */
const TABLE = new URL('./completion-tree.json', import.meta.url)

async function poolNames(passed: readonly string[], prefix: string): Promise<string[]> {
  try {
    const {listPoolNames, poolNamesOptions} = await import('./pool-names.ts')
    const options = poolNamesOptions(passed)
    return options === undefined ? [] : (await listPoolNames(options)).filter((name) => name.startsWith(prefix))
  } catch {
    // A kubeconfig that is missing or unreadable: as `pool names` under the bash script, whose
    // error goes to /dev/null, no names.
    return []
  }
}

const commands = JSON.parse(readFileSync(TABLE, 'utf8')) as CompletionCommand[]
const answer = kubectlCompletion(commands, process.argv.slice(2))
const names = answer.pools === undefined ? [] : await poolNames(answer.pools.passed, answer.pools.prefix)
// Exit once written: the Kubernetes client may keep idle connections that would hold the process,
// and kubectl waits for it to end.
process.stdout.write(cobraOutput([...answer.candidates, ...names], answer.directive), () => process.exit(0))
