/**
 * Every command of `ironpool`, for oclif's explicit command discovery (package.json `oclif.commands`):
 * the CLI is bundled (scripts/build.ts), so there is no commands folder for oclif to scan. Ids use `:`,
 * which users type as a space (`topicSeparator`).
 *
 * Loading this module loads every command's flags, not its work: each command imports the modules it
 * runs on (client-node, gRPC, pino, the sandbox) inside run(), after its flags are validated.
 */
import Completion from './completion.ts'
import Controller from './controller.ts'
import DryRunReport from './dry-run/report.ts'
import LeaseInspect from './lease/inspect.ts'
import PoolNames from './pool/names.ts'
import PoolStatus from './pool/status.ts'
import PoolWhyCommand from './pool/why.ts'
import Poollet from './poollet.ts'
import Sandbox from './sandbox.ts'
import Version from './version.ts'

export const COMMANDS = {
  completion: Completion,
  controller: Controller,
  'dry-run:report': DryRunReport,
  'lease:inspect': LeaseInspect,
  'pool:names': PoolNames,
  'pool:status': PoolStatus,
  'pool:why': PoolWhyCommand,
  poollet: Poollet,
  sandbox: Sandbox,
  version: Version,
}
