/**
 * The contract every benchmark module in bench/ fulfils: it exports `name`, `description` and `run`,
 * and run.ts registers it with one line in its BENCHMARKS list.
 */

/** A goal for one figure: `>=` for throughputs and ratios, `<=` for latencies and error counts. */
export interface Target {
  op: '>=' | '<=';
  value: number;
}

export interface Metric {
  metric: string;
  value: number;
  unit: string;
  target?: Target;
}

export interface Benchmark {
  /** What `npm run bench -- <name>` selects; lower case, no spaces. */
  name: string;
  description: string;
  /** Sets up, measures and cleans up after itself (also on failure); one call per `npm run bench`. */
  run(): Promise<Metric[]>;
}

export function meetsTarget(value: number, target: Target): boolean {
  return target.op === '>=' ? value >= target.value : value <= target.value;
}
