import { Samples } from './stats.js';

export interface ClosedLoopOptions {
  /** Concurrent callers; each waits for its operation before starting the next one. */
  callers: number;
  /** Stop after this many operations in total… */
  operations: number;
  /** …or after this many seconds, whichever comes first. */
  maxSeconds: number;
}

export interface ClosedLoopResult {
  operations: number;
  seconds: number;
  perSecond: number;
  /** One sample per completed operation, in completion order. */
  latenciesMs: Float64Array;
}

/**
 * A closed-loop load driver for in-process benchmarks: `callers` loops each calling `operation(caller)`
 * one at a time, timing every call. `makeCaller(index)` builds a caller's operation, so a caller can
 * keep its own state (its stream, its expected revision, …). A failed operation fails the run.
 */
export async function closedLoop(
  options: ClosedLoopOptions,
  makeCaller: (index: number) => () => Promise<unknown>,
): Promise<ClosedLoopResult> {
  const latencies = new Samples(Math.min(options.operations, 1_000_000));
  let issued = 0;
  const started = performance.now();
  const deadline = started + options.maxSeconds * 1000;
  const loop = async (operation: () => Promise<unknown>) => {
    while (issued < options.operations && performance.now() < deadline) {
      issued += 1;
      const t0 = performance.now();
      await operation();
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: options.callers }, (_, i) => loop(makeCaller(i))));
  const seconds = (performance.now() - started) / 1000;
  return {
    operations: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    latenciesMs: latencies.values(),
  };
}
