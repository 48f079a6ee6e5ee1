/** The command lines of etcd, kube-apiserver and kube-controller-manager (the CSR signer only) in the local control plane. */
import path from 'node:path'

export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local'

export function etcdArgs(dir: string, clientUrl: string, peerUrl: string): string[] {
  return [
    '--name=default',
    `--data-dir=${path.join(dir, 'etcd')}`,
    `--listen-client-urls=${clientUrl}`,
    `--advertise-client-urls=${clientUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=default=${peerUrl}`,
    // Test data need not survive a power cut; fsync would dominate start-up and every write.
    '--unsafe-no-fsync',
    '--log-level=warn',
  ]
}

export function apiServerArgs(pki: string, port: number, etcdUrl: string, extra: readonly string[]): string[] {
  return [
    '--advertise-address=127.0.0.1',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--etcd-servers=${etcdUrl}`,
    `--cert-dir=${pki}`,
    `--tls-cert-file=${path.join(pki, 'apiserver.crt')}`,
    `--tls-private-key-file=${path.join(pki, 'apiserver.key')}`,
    `--client-ca-file=${path.join(pki, 'ca.crt')}`,
    '--authorization-mode=RBAC',
    // The default admission chain (ValidatingAdmissionPolicy, ServiceAccount, NamespaceLifecycle, ...)
    // plus NodeRestriction, as kubeadm enables it.
    '--enable-admission-plugins=NodeRestriction',
    `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
    `--api-audiences=${SERVICE_ACCOUNT_ISSUER}`,
    `--service-account-key-file=${path.join(pki, 'sa.pub')}`,
    `--service-account-signing-key-file=${path.join(pki, 'sa.key')}`,
    '--service-cluster-ip-range=10.96.0.0/24',
    '--allow-privileged=true',
    '--profiling=false',
    // Bootstrap tokens (Secrets of type bootstrap.kubernetes.io/token in kube-system) authenticate, as in
    // a kubeadm cluster: a poollet's first identity before its CSR is issued.
    '--enable-bootstrap-token-auth',
    ...extra,
  ]
}

/**
 * kube-controller-manager running only its CSR signer (the csrsigning controller), with the harness's
 * CA, so that an approved CSR of signer kubernetes.io/kube-apiserver-client gets a certificate the API
 * server trusts. No serving port, no leader election: it is the only one.
 */
export function csrSignerArgs(pki: string, kubeconfig: string, signingDurationSeconds: number): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    '--controllers=csrsigning',
    `--cluster-signing-cert-file=${path.join(pki, 'ca.crt')}`,
    `--cluster-signing-key-file=${path.join(pki, 'ca.key')}`,
    `--cluster-signing-duration=${signingDurationSeconds}s`,
    '--leader-elect=false',
    '--secure-port=0',
    '--v=2',
  ]
}
