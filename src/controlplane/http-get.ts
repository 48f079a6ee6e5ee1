/** A plain GET for health checks and discovery of the local control plane (no client library needed). */
import http from 'node:http'
import https from 'node:https'

export function httpGet(url: string, tls?: {ca: string; cert: string; key: string}): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const request = (url.startsWith('https:') ? https : http).get(url, {...tls, timeout: 5_000}, (response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => (body += chunk.toString()))
      response.on('end', () => resolve({status: response.statusCode ?? 0, body}))
    })
    request.on('timeout', () => request.destroy(new Error(`GET ${url} timed out`)))
    request.on('error', reject)
  })
}
