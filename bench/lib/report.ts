import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { type Metric, type Target, meetsTarget } from './benchmark.js';
import { ROOT_DIR } from './paths.js';

export interface MetricResult extends Metric {
  /** Undefined when the metric has no target (context figures). */
  pass?: boolean;
}

export interface BenchmarkResult {
  name: string;
  description: string;
  durationSeconds: number;
  metrics: MetricResult[];
  /** Set when run() threw; metrics is then empty. */
  error?: string;
}

export interface RunReport {
  date: string;
  machine: Machine;
  commit: string | undefined;
  benchmarks: BenchmarkResult[];
}

export interface Machine {
  os: string;
  platform: string;
  arch: string;
  cpus: { count: number; model: string };
  memoryGiB: number;
  node: string;
  tmpDir: string;
}

export function describeMachine(tmpDir: string): Machine {
  const cpus = os.cpus();
  return {
    os: `${os.type()} ${os.release()}`,
    platform: os.platform(),
    arch: os.arch(),
    cpus: { count: os.availableParallelism?.() ?? cpus.length, model: cpus[0]?.model.trim() ?? 'unknown' },
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    tmpDir,
  };
}

export function currentCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: ROOT_DIR,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

export function withVerdict(metric: Metric): MetricResult {
  return metric.target ? { ...metric, pass: meetsTarget(metric.value, metric.target) } : { ...metric };
}

/** Writes <dir>/<ISO timestamp>.json and <dir>/latest.json; answers the timestamped path. */
export function writeReport(report: RunReport, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(report, null, 2)}\n`;
  // Colons are not allowed in file names everywhere; 2025-01-31T12-00-00.000Z stays sortable.
  const file = join(dir, `${report.date.replace(/:/g, '-')}.json`);
  writeFileSync(file, json);
  writeFileSync(join(dir, 'latest.json'), json);
  return file;
}

export function formatValue(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  const digits = Number.isInteger(value) || abs >= 1000 ? 0 : abs >= 100 ? 1 : abs >= 1 ? 2 : 3;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function formatTarget(target: Target | undefined): string {
  return target ? `${target.op} ${formatValue(target.value)}` : '';
}

/** A plain-text table: benchmark, metric, value, unit, target, pass/fail. */
export function formatTable(results: readonly BenchmarkResult[]): string {
  const header = ['benchmark', 'metric', 'value', 'unit', 'target', 'result'];
  const rows: string[][] = [];
  for (const result of results) {
    if (result.error) {
      rows.push([result.name, 'ERROR', '', '', '', 'error']);
      continue;
    }
    for (const m of result.metrics) {
      rows.push([
        result.name,
        m.metric,
        formatValue(m.value),
        m.unit,
        formatTarget(m.target),
        m.pass === undefined ? '' : m.pass ? 'pass' : 'FAIL',
      ]);
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const rightAligned = new Set([2]);
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (rightAligned.has(i) ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
