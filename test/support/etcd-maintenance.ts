/**
 * etcd's maintenance, as an operator runs it with etcdctl, through etcd's own HTTP gateway (the test
 * control plane's etcd listens on plain HTTP on loopback): the revision, compaction, defragmentation,
 * alarms, and filling the backend with keys of the test's own (outside kube-apiserver's /registry) to
 * reach a space quota.
 */

/** The prefix of the filler keys: kube-apiserver never reads or writes it. */
const FILLER_PREFIX = '/ironpool-test-filler/'
/** One filler value: under etcd's default request limit (1.5 MiB). */
const FILLER_BYTES = 1024 * 1024
/** What etcd answers (a gRPC error through the gateway) when its space quota is exceeded. */
const NOSPACE = 'database space exceeded'

const b64 = (text: string) => Buffer.from(text).toString('base64')
const FILLER_VALUE = b64('x'.repeat(FILLER_BYTES))

async function call<T>(etcdUrl: string, path: string, body: unknown): Promise<{ok: boolean; status: number; body: T & {error?: string; message?: string}}> {
  const response = await fetch(`${etcdUrl}${path}`, {method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(30_000)})
  return {ok: response.ok, status: response.status, body: (await response.json()) as T & {error?: string; message?: string}}
}

function failure(what: string, answer: {status: number; body: {error?: string; message?: string}}): Error {
  return new Error(`etcd ${what}: HTTP ${answer.status} ${answer.body.message ?? answer.body.error ?? ''}`)
}

export async function etcdRevision(etcdUrl: string): Promise<string> {
  const answer = await call<{header: {revision: string}}>(etcdUrl, '/v3/kv/range', {key: b64('/')})
  if (!answer.ok) throw failure('range', answer)
  return answer.body.header.revision
}

/** Compacts etcd up to its current revision (physically, as kube-apiserver's own compactor does not). */
export async function compactEtcd(etcdUrl: string): Promise<void> {
  const revision = await etcdRevision(etcdUrl)
  const answer = await call(etcdUrl, '/v3/kv/compaction', {revision, physical: true})
  if (!answer.ok) throw failure('compaction', answer)
}

export async function defragmentEtcd(etcdUrl: string): Promise<void> {
  const answer = await call(etcdUrl, '/v3/maintenance/defragment', {})
  if (!answer.ok) throw failure('defragment', answer)
}

/** The alarms raised (e.g. ['NOSPACE']). */
export async function etcdAlarms(etcdUrl: string): Promise<string[]> {
  const answer = await call<{alarms?: {alarm?: string}[]}>(etcdUrl, '/v3/maintenance/alarm', {action: 'GET'})
  if (!answer.ok) throw failure('alarm list', answer)
  return (answer.body.alarms ?? []).map((a) => a.alarm ?? 'NONE')
}

/** Disarms the NOSPACE alarm: etcd accepts writes again (if the backend is under its quota). */
export async function disarmNoSpace(etcdUrl: string): Promise<void> {
  const answer = await call(etcdUrl, '/v3/maintenance/alarm', {action: 'DEACTIVATE', memberID: await memberId(etcdUrl), alarm: 'NOSPACE'})
  if (!answer.ok) throw failure('alarm deactivate', answer)
}

async function memberId(etcdUrl: string): Promise<string> {
  const answer = await call<{header: {member_id: string}}>(etcdUrl, '/v3/maintenance/status', {})
  if (!answer.ok) throw failure('status', answer)
  return answer.body.header.member_id
}

/** The size of etcd's backend (what its space quota is measured against), in bytes. */
export async function etcdDbSize(etcdUrl: string): Promise<number> {
  const answer = await call<{dbSize?: string}>(etcdUrl, '/v3/maintenance/status', {})
  if (!answer.ok) throw failure('status', answer)
  return Number(answer.body.dbSize ?? 0)
}

async function putFiller(etcdUrl: string, i: number): Promise<'ok' | 'nospace'> {
  const answer = await call(etcdUrl, '/v3/kv/put', {key: b64(`${FILLER_PREFIX}${i}`), value: FILLER_VALUE})
  if (answer.ok) return 'ok'
  if (`${answer.body.message ?? answer.body.error}`.includes(NOSPACE)) return 'nospace'
  throw failure('put', answer)
}

/**
 * Writes filler keys until etcd's backend is within `headroomBytes` of `quotaBytes`, without raising the
 * alarm: the slow part of filling, done before a scenario's clock starts (on a busy machine, tens of
 * MiB of puts take longer than a fleet's grace period). etcd reports its size as of its last backend
 * commit (every 100 ms), which lags a quick run of puts by several MiB on a busy machine, and a put of
 * 1 MiB grows it by more than 1 MiB: so the puts go at full speed only to twice the headroom, then one
 * at a time, each after a commit has had time to count the last. Returns how many keys it wrote.
 */
export async function fillEtcdNearQuota(etcdUrl: string, quotaBytes: number, headroomBytes: number, maxKeys = 2_000): Promise<number> {
  for (let i = 0; i < maxKeys; i++) {
    const size = await etcdDbSize(etcdUrl)
    if (size >= quotaBytes - headroomBytes) return i
    if (size >= quotaBytes - 2 * headroomBytes) await new Promise((resolve) => setTimeout(resolve, 250))
    else if ((await putFiller(etcdUrl, i)) === 'nospace') throw new Error(`etcd reached its space quota after ${i} MiB of filler, short of ${headroomBytes} bytes of headroom`)
    else continue
    // Counted after a commit: put only if still short.
    if ((await etcdDbSize(etcdUrl)) >= quotaBytes - headroomBytes) return i
    if ((await putFiller(etcdUrl, i)) === 'nospace') throw new Error(`etcd reached its space quota after ${i} MiB of filler, short of ${headroomBytes} bytes of headroom`)
  }
  throw new Error(`etcd took ${maxKeys} MiB of filler without nearing its space quota`)
}

/**
 * Writes filler keys, from key `from` on, until etcd refuses a write for want of space (its NOSPACE
 * alarm is then raised: every write is refused, reads and deletes still answer). Returns how many keys
 * were written in all.
 */
export async function fillEtcdToQuota(etcdUrl: string, from = 0, maxKeys = 2_000): Promise<number> {
  for (let i = from; i < maxKeys; i++) if ((await putFiller(etcdUrl, i)) === 'nospace') return i
  throw new Error(`etcd took ${maxKeys} MiB of filler without reaching its space quota`)
}

/**
 * The operator's recovery from NOSPACE, in etcd's documented order: free space (the filler deleted),
 * compact, defragment, disarm.
 */
export async function recoverFromNoSpace(etcdUrl: string): Promise<void> {
  const prefix = b64(FILLER_PREFIX)
  const end = b64(FILLER_PREFIX.slice(0, -1) + String.fromCharCode(FILLER_PREFIX.charCodeAt(FILLER_PREFIX.length - 1) + 1))
  const deleted = await call(etcdUrl, '/v3/kv/deleterange', {key: prefix, range_end: end})
  if (!deleted.ok) throw failure('deleterange', deleted)
  await compactEtcd(etcdUrl)
  await defragmentEtcd(etcdUrl)
  await disarmNoSpace(etcdUrl)
}
