/**
 * A real Kubernetes control plane on loopback, the way controller-runtime's envtest runs one: etcd and
 * kube-apiserver with RBAC, service accounts and the stock admission plugins (ValidatingAdmissionPolicy
 * among them), an admin kubeconfig, and identities minted on demand so that RBAC is exercised exactly as
 * in a cluster. Used by the integration tests and by `ironpool sandbox`.
 */
import {generateKeyPairSync, randomBytes} from 'node:crypto'
import {existsSync, rmSync} from 'node:fs'
import {mkdir, mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {ensureBinaries, run, type Binaries} from './binaries.ts'
import {apiServerArgs, csrSignerArgs, etcdArgs, SERVICE_ACCOUNT_ISSUER} from './component-args.ts'
import {httpGet} from './http-get.ts'
import {renderKubeconfig} from './kubeconfig.ts'
import {createCertificateAuthority, type CertificateAuthority} from './pki.ts'
import {freePort, ManagedProcess} from './process.ts'
import {ReaperClient} from './reaper-client.ts'

export const ADMIN_USER = 'ironpool:admin'
/** How long start-up may take before the harness gives up and shows the process's log. */
const READY_TIMEOUT_MS = 60_000

export interface ControlPlaneOptions {
  /** Binaries to run; found or built by ensureBinaries() when absent. */
  binaries?: Binaries
  /** Progress lines while binaries are built (kube-controller-manager's too, when startCsrSigner builds it). */
  progress?: (line: string) => void
  /** Extra kube-apiserver flags. */
  apiServerArgs?: readonly string[]
  /** Extra etcd flags (e.g. a small --quota-backend-bytes, for a scenario that fills it). */
  etcdArgs?: readonly string[]
  /** Where ports come from (a test's, to hand start-up a port already taken); freePort() by default. */
  freePort?: () => Promise<number>
}

export interface Identity {
  /** Path of a kubeconfig that authenticates as this identity. */
  kubeconfig: string
  username: string
  groups: readonly string[]
}

export class ControlPlane {
  readonly dir: string
  readonly server: string
  readonly adminKubeconfig: string
  readonly caPem: string
  readonly binaries: Binaries
  private readonly progress: ((line: string) => void) | undefined
  private readonly ca: CertificateAuthority
  private readonly adminCredentials: {certPem: string; keyPem: string}
  private readonly etcd: ManagedProcess
  private readonly apiServer: ManagedProcess
  private csrSigner: ManagedProcess | undefined
  private readonly reaper: ReaperClient
  private readonly onExit: () => void
  private identities = 0
  private stopped = false

  private constructor(init: {
    dir: string
    binaries: Binaries
    progress: ((line: string) => void) | undefined
    ca: CertificateAuthority
    admin: {certPem: string; keyPem: string}
    etcdPort: number
    peerPort: number
    apiPort: number
    apiServerArgs: readonly string[]
    etcdArgs: readonly string[]
  }) {
    this.dir = init.dir
    this.binaries = init.binaries
    this.progress = init.progress
    this.ca = init.ca
    this.caPem = init.ca.certPem
    this.adminCredentials = init.admin
    this.server = `https://127.0.0.1:${init.apiPort}`
    this.adminKubeconfig = path.join(init.dir, 'admin.kubeconfig')

    // The reaper cleans up if this process dies without stop(): see reaper.ts.
    this.reaper = new ReaperClient()
    this.reaper.removeDir(init.dir)
    const register = (pid: number) => this.registerProcessGroup(pid)
    const etcdUrl = `http://127.0.0.1:${init.etcdPort}`
    this.etcd = new ManagedProcess({
      name: 'etcd',
      command: init.binaries.etcd,
      logFile: path.join(init.dir, 'etcd.log'),
      onStart: register,
      args: [...etcdArgs(init.dir, etcdUrl, `http://127.0.0.1:${init.peerPort}`), ...init.etcdArgs],
    })
    this.apiServer = new ManagedProcess({
      name: 'kube-apiserver',
      command: init.binaries['kube-apiserver'],
      logFile: path.join(init.dir, 'kube-apiserver.log'),
      onStart: register,
      args: apiServerArgs(path.join(init.dir, 'pki'), init.apiPort, etcdUrl, init.apiServerArgs),
    })
    this.onExit = () => this.killNow()
    process.once('exit', this.onExit)
  }

  /**
   * Starts etcd and kube-apiserver and waits until /readyz answers. A port found free can be taken by
   * another process before etcd or kube-apiserver binds it (the suite's parallel workers start control
   * planes side by side, and every outgoing connection takes an ephemeral port): a start that fails on
   * "address already in use" is tried again with new ports, up to three times in all.
   */
  static async start(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await ControlPlane.startOnce(options)
      } catch (error) {
        if (attempt >= START_ATTEMPTS || !/address already in use/i.test(String(error))) throw error
        options.progress?.(`a port was taken before it was bound; starting the control plane again with new ports`)
      }
    }
  }

  private static async startOnce(options: ControlPlaneOptions): Promise<ControlPlane> {
    const binaries = options.binaries ?? (await ensureBinaries({progress: options.progress}))
    const dir = await mkdtemp(path.join(tmpdir(), 'ironpool-cp-'))
    try {
      const pki = path.join(dir, 'pki')
      await mkdir(pki)
      const ca = await createCertificateAuthority()
      const serving = await ca.issue({
        commonName: 'kube-apiserver',
        usage: 'server',
        dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
        ipAddresses: ['127.0.0.1', '10.96.0.1'],
      })
      const admin = await ca.issue({commonName: ADMIN_USER, organizations: ['system:masters'], usage: 'client'})
      // Service account token keys, with node:crypto: the API server signs TokenRequests with them.
      const sa = generateKeyPairSync('rsa', {modulusLength: 2048})
      await Promise.all([
        writeFile(path.join(pki, 'ca.crt'), ca.certPem),
        writeFile(path.join(pki, 'apiserver.crt'), serving.certPem),
        writeFile(path.join(pki, 'apiserver.key'), serving.keyPem, {mode: 0o600}),
        writeFile(path.join(pki, 'sa.key'), sa.privateKey.export({type: 'pkcs8', format: 'pem'}), {mode: 0o600}),
        writeFile(path.join(pki, 'sa.pub'), sa.publicKey.export({type: 'spki', format: 'pem'})),
      ])
      const [etcdPort, peerPort, apiPort] = await distinctFreePorts(3, options.freePort ?? freePort)
      const plane = new ControlPlane({
        dir,
        binaries,
        progress: options.progress,
        ca,
        admin,
        etcdPort,
        peerPort,
        apiPort,
        apiServerArgs: options.apiServerArgs ?? [],
        etcdArgs: options.etcdArgs ?? [],
      })
      await writeFile(
        plane.adminKubeconfig,
        renderKubeconfig({server: plane.server, caPem: ca.certPem, user: ADMIN_USER, credentials: {clientCertificatePem: admin.certPem, clientKeyPem: admin.keyPem}}),
        {mode: 0o600},
      )
      try {
        await plane.startEtcd()
        await plane.startApiServer()
      } catch (error) {
        await plane.stop()
        throw error
      }
      return plane
    } catch (error) {
      rmSync(dir, {recursive: true, force: true})
      throw error
    }
  }

  async startEtcd(): Promise<void> {
    this.etcd.start()
    const url = this.etcd.args.find((a) => a.startsWith('--listen-client-urls='))?.split('=')[1] ?? ''
    await this.waitFor(this.etcd, async () => (await httpGet(`${url}/health`)).status === 200)
  }

  async stopEtcd(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    await this.etcd.stop(signal)
  }

  async startApiServer(): Promise<void> {
    this.apiServer.start()
    await this.waitFor(this.apiServer, async () => (await this.request('/readyz')).status === 200)
  }

  async stopApiServer(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    await this.apiServer.stop(signal)
  }

  /**
   * Freezes kube-apiserver (SIGSTOP to its process group): its sockets stay open and connected clients
   * see no error, only silence, until resumeApiServer(). For fault tests; stop() resumes it first.
   */
  pauseApiServer(): void {
    this.apiServer.pause()
  }

  resumeApiServer(): void {
    this.apiServer.resume()
  }

  /** Freezes etcd (SIGSTOP): kube-apiserver stays up and accepts requests but its storage does not answer. */
  pauseEtcd(): void {
    this.etcd.pause()
  }

  resumeEtcd(): void {
    this.etcd.resume()
  }

  /**
   * Starts kube-controller-manager's CSR signer with this CA: approved CSRs of the standard signers get
   * certificates valid for signingDurationSeconds (a short one lets a test see rotation), which the
   * signer backdates by five minutes. Only for the tests that need certificates issued: the first
   * one builds kube-controller-manager (minutes; cachedCsrSigner() says whether it must).
   */
  async startCsrSigner(options: {signingDurationSeconds: number}): Promise<void> {
    let binary = this.binaries['kube-controller-manager']
    if (!existsSync(binary)) binary = (await ensureBinaries({names: ['kube-controller-manager'], progress: this.progress}))['kube-controller-manager']
    if (!existsSync(binary)) throw new Error(`no kube-controller-manager at ${binary}: KUBEBUILDER_ASSETS holds none; unset it to build the control plane with Go`)
    if (this.csrSigner?.running) throw new Error('the CSR signer is already running')
    const pki = path.join(this.dir, 'pki')
    await writeFile(path.join(pki, 'ca.key'), this.ca.keyPem, {mode: 0o600})
    this.csrSigner = new ManagedProcess({
      name: 'kube-controller-manager',
      command: binary,
      logFile: path.join(this.dir, 'kube-controller-manager.log'),
      onStart: (pid) => this.registerProcessGroup(pid),
      args: csrSignerArgs(pki, this.adminKubeconfig, options.signingDurationSeconds),
    })
    this.csrSigner.start()
  }

  async stopCsrSigner(): Promise<void> {
    await this.csrSigner?.stop()
  }

  /**
   * A bootstrap token (a Secret of type bootstrap.kubernetes.io/token in kube-system, as kubeadm makes
   * them): user `system:bootstrap:<id>` in `system:bootstrappers` and the given extra groups, which must
   * start with `system:bootstrappers:`.
   */
  async bootstrapTokenIdentity(extraGroups: readonly string[], options: {expiration?: Date} = {}): Promise<Identity & {tokenId: string}> {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'
    const token = (length: number) => [...randomBytes(length)].map((byte) => alphabet[byte % alphabet.length]).join('')
    const id = token(6)
    const secret = token(16)
    await this.kubectlApply({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'bootstrap.kubernetes.io/token',
      metadata: {name: `bootstrap-token-${id}`, namespace: 'kube-system'},
      stringData: {
        'token-id': id,
        'token-secret': secret,
        'usage-bootstrap-authentication': 'true',
        'auth-extra-groups': extraGroups.join(','),
        ...(options.expiration && {expiration: options.expiration.toISOString().replace(/\.\d{3}Z$/, 'Z')}),
      },
    })
    const username = `system:bootstrap:${id}`
    const kubeconfig = await this.writeKubeconfig(username, {token: `${id}.${secret}`})
    return {kubeconfig, username, groups: ['system:bootstrappers', ...extraGroups, 'system:authenticated'], tokenId: id}
  }

  get apiServerRunning(): boolean {
    return this.apiServer.running
  }

  get etcdRunning(): boolean {
    return this.etcd.running
  }

  /** etcd's client URL (plain HTTP on loopback), for tests that talk to etcd directly, e.g. to compact it. */
  get etcdUrl(): string {
    return this.etcd.args.find((a) => a.startsWith('--listen-client-urls='))?.split('=')[1] ?? ''
  }

  /** Process ids of the running etcd and kube-apiserver (each leads its own process group). */
  get pids(): number[] {
    return [this.etcd.pid, this.apiServer.pid, this.csrSigner?.pid].filter((pid): pid is number => pid !== undefined)
  }

  /**
   * Has the reaper also kill this process group should this process die without stop(): for processes
   * started beside the control plane, like the sandbox's controller and poollets (each its own group).
   */
  registerProcessGroup(pgid: number): void {
    if (!this.stopped) this.reaper.killGroup(pgid)
  }

  /** The group has ended: the reaper must not kill a later group that reuses its id. */
  forgetProcessGroup(pgid: number): void {
    if (!this.stopped) this.reaper.forgetGroup(pgid)
  }

  /** A user authenticated by a client certificate (CN = username, O = groups), as IronCore issues poollets'. */
  async userIdentity(username: string, groups: readonly string[] = [], options: {validity?: {notBefore: Date; notAfter: Date}} = {}): Promise<Identity> {
    const cert = await this.ca.issue({commonName: username, organizations: groups, usage: 'client', validity: options.validity})
    const kubeconfig = await this.writeKubeconfig(username, {clientCertificatePem: cert.certPem, clientKeyPem: cert.keyPem})
    return {kubeconfig, username, groups}
  }

  /**
   * A ServiceAccount's identity through the TokenRequest API, creating the namespace and the account
   * when missing (no controller-manager runs here to create them).
   */
  async serviceAccountIdentity(namespace: string, name: string, expirationSeconds = 3600): Promise<Identity> {
    await this.kubectlApply({apiVersion: 'v1', kind: 'Namespace', metadata: {name: namespace}})
    await this.kubectlApply({apiVersion: 'v1', kind: 'ServiceAccount', metadata: {name, namespace}})
    const token = (
      await this.kubectl(['create', 'token', name, '-n', namespace, `--duration=${expirationSeconds}s`, `--audience=${SERVICE_ACCOUNT_ISSUER}`])
    ).trim()
    const username = `system:serviceaccount:${namespace}:${name}`
    const kubeconfig = await this.writeKubeconfig(username, {token})
    return {kubeconfig, username, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated']}
  }

  /** Runs kubectl against this control plane (as admin unless another kubeconfig is given). */
  kubectl(args: readonly string[], options: {kubeconfig?: string; input?: string} = {}): Promise<string> {
    return run(this.binaries.kubectl, [`--kubeconfig=${options.kubeconfig ?? this.adminKubeconfig}`, ...args], {input: options.input})
  }

  async kubectlApply(...objects: object[]): Promise<string> {
    return this.kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], {input: objects.map((o) => JSON.stringify(o)).join('\n')})
  }

  /** An admin GET against the API server, for health checks and version. */
  async request(urlPath: string): Promise<{status: number; body: string}> {
    return httpGet(`${this.server}${urlPath}`, {ca: this.caPem, cert: this.adminCredentials.certPem, key: this.adminCredentials.keyPem})
  }

  async version(): Promise<{gitVersion: string}> {
    return JSON.parse((await this.request('/version')).body) as {gitVersion: string}
  }

  /** Stops kube-apiserver, then etcd, and removes every file. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    await this.csrSigner?.stop()
    await this.apiServer.stop()
    await this.etcd.stop()
    await rm(this.dir, {recursive: true, force: true})
    process.removeListener('exit', this.onExit)
    this.reaper.close()
  }

  /** Synchronous last resort on process exit. */
  private killNow(): void {
    for (const pid of this.pids) {
      try {
        // SIGKILL ends a paused (stopped) group too: no SIGCONT needed here, nor in the reaper.
        process.kill(-pid, 'SIGKILL')
      } catch {
        // Already gone.
      }
    }
    rmSync(this.dir, {recursive: true, force: true})
  }

  private async writeKubeconfig(user: string, credentials: Parameters<typeof renderKubeconfig>[0]['credentials']): Promise<string> {
    const file = path.join(this.dir, `identity-${++this.identities}.kubeconfig`)
    await writeFile(file, renderKubeconfig({server: this.server, caPem: this.caPem, user, credentials}), {mode: 0o600})
    return file
  }

  private async waitFor(proc: ManagedProcess, ready: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS
    for (;;) {
      if (!proc.running) throw new Error(`${proc.name} exited during start-up:\n${proc.tail()}`)
      if (await ready().catch(() => false)) return
      if (Date.now() > deadline) throw new Error(`${proc.name} not ready after ${READY_TIMEOUT_MS / 1000}s:\n${proc.tail()}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

/** How many times start() tries when a port it chose was taken before it was bound. */
const START_ATTEMPTS = 3

async function distinctFreePorts(count: number, next: () => Promise<number>): Promise<[number, number, number]> {
  const ports = new Set<number>()
  while (ports.size < count) ports.add(await next())
  return [...ports] as [number, number, number]
}
