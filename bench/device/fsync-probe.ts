/**
 * How long a flush to disk takes on this machine, alone and with several processes flushing one file at once (as
 * the workers of GATEWAY_PROCESSES flush the log's WAL): `npx tsx bench/device/fsync-probe.ts [processes]`.
 * Each process appends 4 KiB and calls fdatasync, 300 times; prints the median and p99 per flush, per process count.
 */
import { fork } from 'node:child_process';
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { percentile } from '../lib/stats.js';

const FLUSHES = 300;

function flushes(file: string): number[] {
  const fd = openSync(file, 'a');
  const page = Buffer.alloc(4096, 7);
  const took: number[] = [];
  for (let i = 0; i < FLUSHES; i++) {
    writeSync(fd, page);
    const started = performance.now();
    fdatasyncSync(fd);
    took.push(performance.now() - started);
  }
  closeSync(fd);
  return took;
}

async function run(processes: number, file: string): Promise<number[]> {
  const script = fileURLToPath(import.meta.url);
  const children = Array.from({ length: processes }, () =>
    fork(script, ['--child', file], { execArgv: ['--import', 'tsx'] }),
  );
  const results = await Promise.all(
    children.map((child) => new Promise<number[]>((resolve) => child.once('message', (m) => resolve(m as number[])))),
  );
  return results.flat().sort((a, b) => a - b);
}

if (process.argv[2] === '--child') {
  process.send!(flushes(process.argv[3]), () => process.exit(0));
} else {
  const dir = mkdtempSync(join(tmpdir(), 'dmg-fsync-'));
  try {
    for (const processes of [1, 2, 4, 8].filter((n) => n <= Number(process.argv[2] ?? 8))) {
      const took = await run(processes, join(dir, `wal-${processes}`));
      const f = (ms: number) => ms.toFixed(3);
      process.stdout.write(
        `${processes} process(es) flushing one file: fdatasync median ${f(percentile(took, 50))} ms, p99 ${f(percentile(took, 99))} ms\n`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
