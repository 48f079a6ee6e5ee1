/**
 * Where a poollet keeps the kubeconfig it was issued: a file (`--kubeconfig`, written atomically with
 * mode 0600: a new file beside it, synced, then renamed over it, so a crash never leaves half a
 * kubeconfig) or a Secret (`--kubeconfig-secret-name`, field `kubeconfig`, written by server-side apply
 * as IronCore's SecretStore does), read and written through the process's own cluster credentials.
 */
import type {KubeConfig, V1Secret} from '@kubernetes/client-node'
import {randomBytes} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {mkdir, open, readFile, rename, rm} from 'node:fs/promises'
import path from 'node:path'
import {httpStatus, translateApiError} from '../http/api-errors.ts'
import {apiRequest} from '../http/api-request.ts'

export interface KubeconfigStore {
  /** For logs and messages: `file /etc/ironpool/kubeconfig`, `Secret ns/name`. */
  readonly describe: string
  /** The stored kubeconfig, or undefined when there is none yet. */
  load(): Promise<string | undefined>
  save(kubeconfig: string): Promise<void>
}

export function fileKubeconfigStore(file: string): KubeconfigStore {
  return {
    describe: `file ${file}`,
    async load() {
      try {
        return await readFile(file, 'utf8')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
        throw error
      }
    },
    async save(kubeconfig) {
      await mkdir(path.dirname(file), {recursive: true})
      const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`
      try {
        const handle = await open(temporary, 'wx', 0o600)
        try {
          await handle.writeFile(kubeconfig)
          await handle.sync()
        } finally {
          await handle.close()
        }
        await rename(temporary, file)
      } catch (error) {
        await rm(temporary, {force: true})
        throw error
      }
    },
  }
}

/** IronCore's field of the kubeconfig in its Secret, and this writer's field manager. */
export const SECRET_KUBECONFIG_FIELD = 'kubeconfig'
const FIELD_MANAGER = 'ironpool-poollet'
/** The content type of a server-side apply; the body is JSON, which is YAML too. */
const APPLY_PATCH = 'application/apply-patch+yaml'
const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace'

/** IronCore's LoadDefaultNamespace: $POD_NAMESPACE, the ServiceAccount's namespace, else `default`. */
export function defaultSecretNamespace(env: NodeJS.ProcessEnv = process.env): string {
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE
  try {
    const namespace = readFileSync(SERVICE_ACCOUNT_NAMESPACE_FILE, 'utf8').trim()
    if (namespace) return namespace
  } catch {
    // Not in a pod.
  }
  return 'default'
}

export function secretKubeconfigStore(kc: KubeConfig, namespace: string, name: string, requestTimeoutMs = 10_000): KubeconfigStore {
  const secretPath = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`
  const resource = `secret ${namespace}/${name}`
  return {
    describe: `Secret ${namespace}/${name}`,
    async load() {
      try {
        const secret = await apiRequest<V1Secret>(kc, {method: 'GET', path: secretPath, timeoutMs: requestTimeoutMs})
        // The wire JSON: data values are base64 strings.
        const data = secret.data?.[SECRET_KUBECONFIG_FIELD]
        return data ? Buffer.from(data, 'base64').toString('utf8') : undefined
      } catch (error) {
        if (httpStatus(error) === 404) return undefined
        throw translateApiError(error, {verb: 'get', resource})
      }
    },
    async save(kubeconfig) {
      const body = {apiVersion: 'v1', kind: 'Secret', metadata: {name, namespace}, data: {[SECRET_KUBECONFIG_FIELD]: Buffer.from(kubeconfig).toString('base64')}}
      try {
        await apiRequest(kc, {method: 'PATCH', path: secretPath, query: {fieldManager: FIELD_MANAGER, force: true}, body, contentType: APPLY_PATCH, timeoutMs: requestTimeoutMs})
      } catch (error) {
        throw translateApiError(error, {verb: 'apply', resource})
      }
    },
  }
}
