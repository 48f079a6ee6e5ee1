/** Nearest-rank percentiles of a sample, the way latency targets are usually stated. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

export function summary(values: readonly number[]): {n: number; p50: number; p99: number; max: number; min: number} {
  return {n: values.length, p50: percentile(values, 50), p99: percentile(values, 99), max: Math.max(...values), min: Math.min(...values)}
}
