/**
 * A bare HTTPS client for the load generator: keep-alive connections with the kubeconfig's client
 * certificate. client-node costs the bench (and the API server) enough per request that on 2 cores the
 * generator fell behind at 100 renewals/s and starved Leases past the grace period; the generator must
 * be cheap so that the controller is what is measured.
 */
import https from 'node:https'
import type {KubeConfig} from '@kubernetes/client-node'

export class KeepAliveApi {
  private readonly agent: https.Agent
  private readonly server: URL

  constructor(kubeConfig: KubeConfig, maxSockets: number) {
    const cluster = kubeConfig.getCurrentCluster()
    const user = kubeConfig.getCurrentUser()
    if (cluster === null || user?.certData === undefined || user.keyData === undefined || cluster.caData === undefined) {
      throw new Error('KeepAliveApi needs a kubeconfig with inline CA, client certificate and key (the admin one)')
    }
    const b64 = (data: string) => Buffer.from(data, 'base64')
    this.server = new URL(cluster.server)
    this.agent = new https.Agent({keepAlive: true, maxSockets, ca: b64(cluster.caData), cert: b64(user.certData), key: b64(user.keyData)})
  }

  /** Sends the request; resolves with the status code, rejects on a network error or a status ≥ 300. */
  request(method: string, path: string, body: object, contentType: string): Promise<number> {
    const payload = JSON.stringify(body)
    return new Promise((resolve, reject) => {
      const request = https.request(
        {agent: this.agent, host: this.server.hostname, port: this.server.port, method, path, timeout: 10_000, headers: {'Content-Type': contentType, 'Content-Length': Buffer.byteLength(payload)}},
        (response) => {
          response.resume()
          response.on('end', () => {
            const status = response.statusCode ?? 0
            if (status < 300) resolve(status)
            else reject(new Error(`${method} ${path}: HTTP ${status}`))
          })
        },
      )
      request.on('timeout', () => request.destroy(new Error(`${method} ${path} timed out`)))
      request.on('error', reject)
      request.end(payload)
    })
  }

  close(): void {
    this.agent.destroy()
  }
}
