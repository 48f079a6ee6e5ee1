/**
 * Records real processes' /metrics as Prometheus would, and writes the samples as promtool
 * `input_series`: the replay of a fault is then `promtool test rules` on ironpool's own alerts.
 *
 * The mapping from the recording to promtool's time (documented, the same for every fault):
 * - One step of the recording is one scrape of every target, at least STEP_MS apart; step i is
 *   promtool's minute i (`interval: 1m`). Time is compressed by about 120: the fault suite's 3 s grace
 *   period is about six steps, six minutes for the rules, as a 50 s grace is one minute in production.
 * - Each target adds the labels deploy/monitoring's PodMonitors give it (job, instance, namespace, pod,
 *   and pool for a poollet), and a synthetic `up` of 1 or 0, as Prometheus does.
 * - A scrape that fails (refused, or no answer within SCRAPE_TIMEOUT_MS: a stopped process) makes `up`
 *   0 and writes a staleness marker on each of the target's series that had a sample, then gaps: as
 *   Prometheus marks series gone. A series absent from a good scrape is marked stale the same way.
 * - Values are written as scraped, except timestamps (names ending in _timestamp_seconds, and
 *   process_start_time_seconds): shifted by the recording's first wall-clock second so that it falls
 *   at promtool's 0, never scaled. Only one alert compares a timestamp with time() (a certificate's end,
 *   hours or days away), where the compression's error (minutes) does not matter.
 */

export const STEP_MS = 500
/**
 * Long enough for a process on a busy machine to answer (at 350 ms a loaded controller missed one
 * scrape in a full run at load 13: a staleness marker in mid-fault reset a pending alert, which then
 * fired a step too late); a stopped process never answers, and only makes its steps this long.
 */
export const SCRAPE_TIMEOUT_MS = 1500

export interface Target {
  /** Target labels, job included (instance is filled in from the address when missing). */
  labels: Record<string, string>
  /** The URL of /metrics, or undefined while the process has not said where it serves it (down). */
  url: () => string | undefined
}

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

type Scrape = {up: true; samples: Sample[]} | {up: false}

/** Parses Prometheus' text format (what prom-client writes): one sample a line, comments skipped. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/.exec(line)
    if (!match?.[1] || match[3] === undefined) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] ?? ''] = (pair[2] ?? '').replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c))
    }
    samples.push({name: match[1], labels, value: parseValue(match[3])})
  }
  return samples
}

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity
  if (text === '-Inf') return -Infinity
  return Number(text)
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Infinity) return '+Inf'
  if (value === -Infinity) return '-Inf'
  return String(value)
}

const isTimestamp = (name: string) => name.endsWith('_timestamp_seconds') || name === 'process_start_time_seconds'

function seriesKey(name: string, labels: Record<string, string>): string {
  const body = Object.keys(labels)
    .sort()
    .map((key) => `${key}="${(labels[key] ?? '').replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`)
    .join(', ')
  return `${name}{${body}}`
}

export class MetricsRecorder {
  private readonly targets: Target[] = []
  /** Per step: its wall-clock start, and each target's scrape (by index into targets; missing = not yet a target). */
  private readonly steps: Array<{wallMs: number; scrapes: Map<number, Scrape>}> = []

  add(target: Target): void {
    this.targets.push(target)
  }

  remove(target: Target): void {
    const index = this.targets.indexOf(target)
    if (index >= 0) this.targets[index] = {labels: target.labels, url: () => undefined}
  }

  get length(): number {
    return this.steps.length
  }

  /** One step: every target scraped at once, each bounded by SCRAPE_TIMEOUT_MS. */
  async step(): Promise<void> {
    const wallMs = Date.now()
    const scrapes = new Map<number, Scrape>()
    await Promise.all(
      this.targets.map(async (target, index) => {
        const url = target.url()
        if (url === undefined) return scrapes.set(index, {up: false})
        try {
          const response = await fetch(url, {signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS)})
          if (response.status !== 200) return scrapes.set(index, {up: false})
          scrapes.set(index, {up: true, samples: parseExposition(await response.text())})
        } catch {
          scrapes.set(index, {up: false})
        }
        return undefined
      }),
    )
    this.steps.push({wallMs, scrapes})
    // Paced from the step's start: a slow scrape (a stopped target) makes a step longer, never shorter.
    const rest = STEP_MS - (Date.now() - wallMs)
    if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest))
  }

  async record(steps: number): Promise<void> {
    for (let i = 0; i < steps; i++) await this.step()
  }

  /** Records until check() holds after a step (at most maxSteps); the steps it took. */
  async recordUntil(what: string, check: () => boolean | Promise<boolean>, maxSteps: number): Promise<number> {
    for (let i = 1; i <= maxSteps; i++) {
      await this.step()
      if (await check()) return i
    }
    throw new Error(`${what}: not within ${maxSteps} steps`)
  }

  /** The recording as promtool input_series (one value per step; 'stale' and '_' as the header says). */
  inputSeries(): Array<{series: string; values: string}> {
    const t0 = (this.steps[0]?.wallMs ?? 0) / 1000
    const series = new Map<string, string[]>()
    const row = (key: string) => {
      let values = series.get(key)
      if (values === undefined) {
        values = []
        series.set(key, values)
      }
      return values
    }
    this.steps.forEach((step, i) => {
      for (const [index, scrape] of step.scrapes) {
        const target = this.targets[index]
        if (target === undefined) continue
        row(seriesKey('up', target.labels))[i] = scrape.up ? '1' : '0'
        if (!scrape.up) continue
        for (const sample of scrape.samples) {
          const value = isTimestamp(sample.name) ? sample.value - t0 : sample.value
          row(seriesKey(sample.name, {...sample.labels, ...target.labels}))[i] = formatValue(value)
        }
      }
    })
    return [...series].map(([key, values]) => {
      const out: string[] = []
      for (let i = 0; i < this.steps.length; i++) {
        const value = values[i]
        if (value !== undefined) out.push(value)
        else out.push(i > 0 && values[i - 1] !== undefined ? 'stale' : '_')
      }
      return {series: key, values: out.join(' ')}
    })
  }
}
