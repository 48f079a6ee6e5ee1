/**
 * The dry run's agreement with the controller in charge: each would-mark of the dry run paired with a
 * mark of the same pool (same kind, name and UID) made within a window of it, and the ones only one
 * of them made. Read from their Events (the marks' and the WouldMarkUnknown ones), so it measures what
 * each really did, whoever the controller in charge is (ironpool's, or IronCore's lifecycle controller,
 * whose marks have the same reason).
 */

/** One mark, or would-mark, as its Event shows it. at: wall ms (the record's time, else the Event's). */
export interface MarkSighting {
  kind: string
  pool: string
  uid?: string
  at: number
}

export interface AgreedMark {
  kind: string
  pool: string
  markedAt: number
  wouldMarkAt: number
  /** wouldMarkAt - markedAt: negative when the dry run was first. */
  deltaMs: number
}

export interface Agreement {
  windowMs: number
  agreed: AgreedMark[]
  /** Marked by the controller in charge, with no would-mark of the dry run within the window. */
  onlyMarked: MarkSighting[]
  /** Would-marked by the dry run, with no mark within the window. */
  onlyWouldMark: MarkSighting[]
  /** agreed / (agreed + onlyMarked + onlyWouldMark), 1 when there is nothing to compare. */
  ratio: number
  /** The largest |deltaMs| of the agreed pairs (0 when none). */
  maxAbsDeltaMs: number
}

const key = (s: MarkSighting) => `${s.kind}/${s.pool}/${s.uid ?? ''}`

/**
 * Pairs in time order per pool, each mark with the nearest unpaired would-mark within windowMs (a pool
 * that died twice pairs twice). Sightings before sinceMs are left out of both sides.
 */
export function agreement(marks: readonly MarkSighting[], wouldMarks: readonly MarkSighting[], windowMs: number, sinceMs = Number.NEGATIVE_INFINITY): Agreement {
  const byPool = new Map<string, MarkSighting[]>()
  for (const w of wouldMarks) if (w.at >= sinceMs) byPool.set(key(w), [...(byPool.get(key(w)) ?? []), w])
  const agreed: AgreedMark[] = []
  const onlyMarked: MarkSighting[] = []
  for (const mark of [...marks].filter((m) => m.at >= sinceMs).sort((a, b) => a.at - b.at)) {
    const candidates = byPool.get(key(mark)) ?? []
    let best = -1
    for (let i = 0; i < candidates.length; i++) {
      const d = Math.abs(candidates[i]!.at - mark.at)
      if (d <= windowMs && (best < 0 || d < Math.abs(candidates[best]!.at - mark.at))) best = i
    }
    if (best < 0) {
      onlyMarked.push(mark)
      continue
    }
    const [would] = candidates.splice(best, 1)
    agreed.push({kind: mark.kind, pool: mark.pool, markedAt: mark.at, wouldMarkAt: would!.at, deltaMs: would!.at - mark.at})
  }
  const onlyWouldMark = [...byPool.values()].flat().sort((a, b) => a.at - b.at)
  const total = agreed.length + onlyMarked.length + onlyWouldMark.length
  return {
    windowMs,
    agreed,
    onlyMarked,
    onlyWouldMark,
    ratio: total === 0 ? 1 : agreed.length / total,
    maxAbsDeltaMs: agreed.reduce((max, a) => Math.max(max, Math.abs(a.deltaMs)), 0),
  }
}
