/**
 * `npm run bench [-- <name>...] [--strict]`: runs the named benchmarks (none named: all, in list order),
 * prints a table and writes bench/results/<ISO timestamp>.json and bench/results/latest.json.
 *
 * Exit code: 1 when a benchmark failed to run (or, with --strict, when a figure misses its target).
 *
 * To add a benchmark: write bench/<name>.ts exporting `name`, `description` and `run(): Promise<Metric[]>`
 * (see bench/lib/benchmark.ts) and add one line to BENCHMARKS below.
 */
import type { Benchmark } from './lib/benchmark.js';
import { killAllChildren } from './lib/child.js';
import { RESULTS_DIR } from './lib/paths.js';
import {
  type BenchmarkResult,
  currentCommit,
  describeMachine,
  formatTable,
  withVerdict,
  writeReport,
} from './lib/report.js';
import { BENCH_TMP_ROOT } from './lib/temp.js';

/** Every benchmark, loaded lazily (a module's imports cost nothing unless it is selected). */
const BENCHMARKS: ReadonlyArray<() => Promise<Benchmark>> = [
  () => import('./store.js'),
  () => import('./http.js'),
  () => import('./webhooks.js'),
  () => import('./devices.js'),
  () => import('./baileys.js'),
  () => import('./send.js'),
  () => import('./drain.js'),
  () => import('./rebuild.js'),
  () => import('./ids.js'),
  () => import('./stream.js'),
  () => import('./inbound-media.js'),
  () => import('./media-download.js'),
  () => import('./send-reply.js'),
  () => import('./conversations.js'),
  () => import('./cluster.js'),
  () => import('./groups.js'),
  () => import('./scale.js'),
  () => import('./projector.js'),
  () => import('./outputs.js'),
  () => import('./outputs-fanout.js'),
  () => import('./history-import.js'),
  () => import('./search.js'),
  () => import('./status.js'),
];

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const strict = args.includes('--strict');
  const wanted = args.filter((a) => !a.startsWith('--'));
  const available = await Promise.all(BENCHMARKS.map((load) => load()));
  const unknown = wanted.filter((name) => !available.some((b) => b.name === name));
  if (unknown.length > 0) {
    process.stderr.write(
      `unknown benchmark(s): ${unknown.join(', ')}\navailable: ${available.map((b) => b.name).join(', ')}\n`,
    );
    return 2;
  }
  const selected = wanted.length === 0 ? available : available.filter((b) => wanted.includes(b.name));

  const date = new Date().toISOString();
  const machine = describeMachine(BENCH_TMP_ROOT);
  process.stderr.write(
    `bench ${date} on ${machine.os}, ${machine.cpus.count}× ${machine.cpus.model}, Node ${machine.node}\n`,
  );

  const results: BenchmarkResult[] = [];
  for (const benchmark of selected) {
    process.stderr.write(`▶ ${benchmark.name}: ${benchmark.description}\n`);
    const started = performance.now();
    try {
      const metrics = await benchmark.run();
      results.push({
        name: benchmark.name,
        description: benchmark.description,
        durationSeconds: seconds(started),
        metrics: metrics.map(withVerdict),
      });
      process.stderr.write(`  done in ${seconds(started)} s\n`);
    } catch (error) {
      const message = (error as Error)?.stack ?? String(error);
      results.push({
        name: benchmark.name,
        description: benchmark.description,
        durationSeconds: seconds(started),
        metrics: [],
        error: message,
      });
      process.stderr.write(`  FAILED after ${seconds(started)} s: ${message}\n`);
    }
  }

  const file = writeReport({ date, machine, commit: currentCommit(), benchmarks: results }, RESULTS_DIR);
  process.stdout.write(`\n${formatTable(results)}\n\nresults: ${file}\n`);

  const errors = results.filter((r) => r.error).length;
  const misses = results.flatMap((r) => r.metrics).filter((m) => m.pass === false).length;
  if (errors || misses)
    process.stdout.write(`${errors} benchmark(s) failed to run, ${misses} figure(s) missed their target\n`);
  return errors > 0 || (strict && misses > 0) ? 1 : 0;
}

function seconds(startedMs: number): number {
  return Math.round((performance.now() - startedMs) / 100) / 10;
}

main().then(
  (code) => {
    killAllChildren();
    process.exit(code);
  },
  (error: unknown) => {
    killAllChildren();
    process.stderr.write(`bench failed: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
