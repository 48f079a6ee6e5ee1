import {Command} from '@oclif/core'

export interface VersionInfo {
  ironpool: string
  node: string
  platform: string
}

export default class Version extends Command {
  static override description = 'Print the version of ironpool and the Node.js runtime it runs on.'
  static override enableJsonFlag = true
  static override examples = ['<%= config.bin %> version', '<%= config.bin %> version --json']

  async run(): Promise<VersionInfo> {
    await this.parse(Version)
    const info: VersionInfo = {ironpool: this.config.version, node: process.version, platform: `${process.platform}-${process.arch}`}
    this.log(`ironpool ${info.ironpool} (node ${info.node}, ${info.platform})`)
    return info
  }
}
