/** Small statistics helpers shared by the benchmarks. */

/**
 * The p-th percentile (0..100) of values sorted ascending, interpolating linearly between the two
 * nearest ranks. NaN for no values.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (p <= 0) return sorted[0];
  if (p >= 100) return sorted[sorted.length - 1];
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

export interface Summary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Summarises samples (any order; the input is not modified). */
export function summarize(values: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    min: sorted.length ? sorted[0] : Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : Number.NaN,
  };
}

/** Rounds to `digits` significant decimals for storing figures (not for display). */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** a / b, NaN when b is 0. */
export function ratio(a: number, b: number): number {
  return b === 0 ? Number.NaN : a / b;
}

/** Collects timings into a growable typed array (no per-sample allocation on hot paths). */
export class Samples {
  private data: Float64Array;
  length = 0;

  constructor(initialCapacity = 1024) {
    this.data = new Float64Array(Math.max(1, initialCapacity));
  }

  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }

  values(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}
