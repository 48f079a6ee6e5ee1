/**
 * Small builders for the Kubernetes objects in deploy/: plain objects, serialised by render-manifests.ts.
 * Builders rather than YAML templates so that every kind-specific name comes from the kinds table and the
 * compiler sees every use of it.
 */
export type Manifest = Record<string, unknown>

export type PolicyRule =
  | {apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[]}
  /** A rule of non-resource URLs (a ClusterRole's only), e.g. `get` on `/metrics`. */
  | {nonResourceURLs: string[]; verbs: string[]}

export type Subject =
  | {kind: 'Group'; apiGroup: 'rbac.authorization.k8s.io'; name: string}
  | {kind: 'ServiceAccount'; name: string; namespace: string}

/** Every object ironpool ships carries this label, so `kubectl get -l` finds them all. */
export const PART_OF = {'app.kubernetes.io/part-of': 'ironpool'}

const RBAC = 'rbac.authorization.k8s.io'

export function metadata(name: string, namespace?: string): Manifest {
  return namespace === undefined ? {name, labels: PART_OF} : {name, namespace, labels: PART_OF}
}

export function namespace(name: string): Manifest {
  return {apiVersion: 'v1', kind: 'Namespace', metadata: metadata(name)}
}

export function serviceAccount(name: string, ns: string): Manifest {
  return {apiVersion: 'v1', kind: 'ServiceAccount', metadata: metadata(name, ns)}
}

export function groupSubject(name: string): Subject {
  return {kind: 'Group', apiGroup: RBAC, name}
}

export function serviceAccountSubject(name: string, ns: string): Subject {
  return {kind: 'ServiceAccount', name, namespace: ns}
}

export function role(name: string, ns: string, rules: PolicyRule[]): Manifest {
  return {apiVersion: `${RBAC}/v1`, kind: 'Role', metadata: metadata(name, ns), rules}
}

export function clusterRole(name: string, rules: PolicyRule[]): Manifest {
  return {apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: metadata(name), rules}
}

/** A RoleBinding named after the Role it binds, as IronCore names its own. */
export function roleBinding(roleName: string, ns: string, subjects: Subject[]): Manifest {
  return {apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: metadata(roleName, ns), roleRef: {apiGroup: RBAC, kind: 'Role', name: roleName}, subjects}
}

export function clusterRoleBinding(roleName: string, subjects: Subject[]): Manifest {
  return {apiVersion: `${RBAC}/v1`, kind: 'ClusterRoleBinding', metadata: metadata(roleName), roleRef: {apiGroup: RBAC, kind: 'ClusterRole', name: roleName}, subjects}
}

export function kustomization(resources: string[], component = false): Manifest {
  return component ? {apiVersion: 'kustomize.config.k8s.io/v1alpha1', kind: 'Component', resources} : {apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources}
}
