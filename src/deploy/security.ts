/** The hardened pod and container security settings every ironpool Deployment shares (restricted Pod Security). */
import type {Manifest} from './manifest.ts'

/** The image's numeric user (the Dockerfile's USER 1000:1000), so the kubelet can verify runAsNonRoot. */
export const RUN_AS_USER = 1000

export const POD_SECURITY_CONTEXT: Manifest = {
  runAsNonRoot: true,
  runAsUser: RUN_AS_USER,
  runAsGroup: RUN_AS_USER,
  seccompProfile: {type: 'RuntimeDefault'},
}

export const CONTAINER_SECURITY_CONTEXT: Manifest = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: {drop: ['ALL']},
  seccompProfile: {type: 'RuntimeDefault'},
}

/** A read-only root filesystem still leaves Node and its libraries a writable /tmp, bounded in size. */
export const TMP_VOLUME: Manifest = {name: 'tmp', emptyDir: {sizeLimit: '64Mi'}}
export const TMP_MOUNT: Manifest = {name: 'tmp', mountPath: '/tmp'}

export const RESOURCES: Manifest = {
  requests: {cpu: '50m', memory: '96Mi'},
  limits: {cpu: '500m', memory: '256Mi'},
}
