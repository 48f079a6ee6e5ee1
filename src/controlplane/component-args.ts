/** The command lines of etcd and kube-apiserver in the local control plane. */
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
    ...extra,
  ]
}
