/**
 * deploy/controller: the controller's namespace, ServiceAccount and permissions. It reads every pool and
 * writes only their status (the Ready=Unknown mark), records events, and holds one leader-election Lease.
 * Lease reads in the pool-lease namespaces are granted there (lease-namespaces.ts), not cluster-wide.
 */
import {CLIENT_SIGNER, CSR_API_GROUP, POOL_KIND_NAMES, POOL_KINDS, WRITE_PROBE_LEASE} from '../../core/index.ts'
import {clusterRole, clusterRoleBinding, namespace, role, roleBinding, serviceAccount, serviceAccountSubject, type Manifest, type PolicyRule} from '../manifest.ts'
import {CONTROLLER_NAME, CONTROLLER_NAMESPACE, CSR_APPROVER_ROLE, LEADER_ELECTION_ID, LEADER_ELECTION_ROLE} from '../names.ts'

export function controllerNamespace(): Manifest[] {
  return [namespace(CONTROLLER_NAMESPACE), serviceAccount(CONTROLLER_NAME, CONTROLLER_NAMESPACE)]
}

function poolRules(): PolicyRule[] {
  return POOL_KIND_NAMES.flatMap((name) => {
    const kind = POOL_KINDS[name]
    return [
      {apiGroups: [kind.group], resources: [kind.plural], verbs: ['get', 'list', 'watch']},
      {apiGroups: [kind.group], resources: [`${kind.plural}/status`], verbs: ['get', 'patch', 'update']},
    ]
  })
}

/** Both event APIs: client libraries record through either, and a 403 would only show in logs. */
const EVENT_RULES: PolicyRule[] = [
  {apiGroups: [''], resources: ['events'], verbs: ['create', 'patch']},
  {apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch']},
]

/**
 * `--metrics-secure` (set in deploy/controller): each scrape's bearer token is reviewed (TokenReview) and
 * its user asked about `get /metrics` (SubjectAccessReview), as controller-runtime's
 * WithAuthenticationAndAuthorization needs (kubebuilder's `metrics-auth-role`).
 */
const METRICS_AUTH_RULES: PolicyRule[] = [
  {apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create']},
  {apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create']},
]

export function controllerClusterRbac(): Manifest[] {
  return [
    clusterRole(CONTROLLER_NAME, [...poolRules(), ...EVENT_RULES, ...METRICS_AUTH_RULES]),
    clusterRoleBinding(CONTROLLER_NAME, [serviceAccountSubject(CONTROLLER_NAME, CONTROLLER_NAMESPACE)]),
  ]
}

const LEADER_LEASE_RULES: PolicyRule[] = [
  // The leader-election Lease, and the sight's write probe (src/core/lifecycle/sight/write-probe.ts), which renews a Lease of its own here.
  {apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [LEADER_ELECTION_ID, WRITE_PROBE_LEASE], verbs: ['get', 'update']},
  // RBAC cannot restrict `create` by name (the object has no name until the request is admitted), so
  // create is granted on any Lease in this namespace; nothing else of the controller's lives here.
  {apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create']},
]

export function leaderElectionRbac(): Manifest[] {
  return [
    role(LEADER_ELECTION_ROLE, CONTROLLER_NAMESPACE, LEADER_LEASE_RULES),
    roleBinding(LEADER_ELECTION_ROLE, CONTROLLER_NAMESPACE, [serviceAccountSubject(CONTROLLER_NAME, CONTROLLER_NAMESPACE)]),
  ]
}

/**
 * deploy/csr-approver (opt-in, with `--approve-poollet-csrs`): what IronCore's approver holds — read
 * CSRs, update their approval, `approve` on the signer kubernetes.io/kube-apiserver-client only, and
 * SubjectAccessReviews to ask whether a requester may have a poollet's certificate.
 */
export function csrApproverRbac(): Manifest[] {
  return [
    clusterRole(CSR_APPROVER_ROLE, [
      {apiGroups: [CSR_API_GROUP], resources: ['certificatesigningrequests'], verbs: ['get', 'list', 'watch']},
      {apiGroups: [CSR_API_GROUP], resources: ['certificatesigningrequests/approval'], verbs: ['update']},
      {apiGroups: [CSR_API_GROUP], resources: ['signers'], resourceNames: [CLIENT_SIGNER], verbs: ['approve']},
      {apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create']},
    ]),
    clusterRoleBinding(CSR_APPROVER_ROLE, [serviceAccountSubject(CONTROLLER_NAME, CONTROLLER_NAMESPACE)]),
  ]
}
